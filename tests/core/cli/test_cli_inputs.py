"""Issue 11: command-line inputs that were accepted, lost or crashed (points 6, 7, 12 and 13)."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.run.status import read_status
from core.run.store import load_run_config
from tests.training_helpers import cli, copy_run


def test_env_flag_keeps_env_kwargs_from_set(runs_dir):  # point 6
    done = cli("train", "--algo", "random", "--env", "Pendulum-v1", "--episodes", "1", "--set", "env.kwargs={g: 3.0}",
               "--runs-dir", str(runs_dir), "--json")
    assert done.returncode == 0, done.stderr
    run = runs_dir / json.loads(done.stdout)["id"]
    assert load_run_config(run).env.kwargs == {"g": 3.0}


def test_env_flag_keeps_env_kwargs_from_config(runs_dir, tmp_path):  # point 6, --config
    config = tmp_path / "pend.yaml"
    config.write_text("env: {id: Pendulum-v1, kwargs: {g: 4.5}}\n")
    done = cli("train", "--algo", "random", "--env", "Pendulum-v1", "--episodes", "1", "--config", str(config),
               "--runs-dir", str(runs_dir), "--detach", "--json")
    assert done.returncode == 0, done.stderr
    run = runs_dir / json.loads(done.stdout)["id"]
    assert load_run_config(run).env.kwargs == {"g": 4.5}


def test_plan_env_keeps_env_kwargs_from_set():  # point 6, the same path in a plan
    from core.queue.plan import PlanJob

    job = PlanJob(name="p", algo="random", env="Pendulum-v1", set={"env.kwargs": {"g": 2.0}})
    assert job.config().env.kwargs == {"g": 2.0}


@pytest.mark.training
@pytest.mark.parametrize("steps", ["-5", "0", "abc"])
def test_resume_refuses_a_step_count_below_one(trained_run, runs_dir, capsys, steps):  # point 7
    run = copy_run(trained_run, runs_dir, state="stopped")
    before = (run / "config.yaml").read_text()
    code = main(["resume", run.name, "--timesteps", steps, "--runs-dir", str(runs_dir)])
    assert code == 2
    assert "--timesteps" in capsys.readouterr().err
    assert (run / "config.yaml").read_text() == before, "the run's total is untouched"
    assert read_status(run).state == "stopped", "no attempt was launched"


def test_resume_run_refuses_more_steps_below_one(trained_run, runs_dir):  # point 7, the library call the window makes
    from core.launch.control import ResumeError, resume_run

    run = copy_run(trained_run, runs_dir, state="stopped")
    with pytest.raises(ResumeError, match="at least 1"):
        resume_run(run, -5)
    assert read_status(run).state == "stopped"


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_nan_and_inf_are_refused_at_validation(value, capsys):  # point 12
    code = main(["estimate", "--algo", "SAC", "--env", "Pendulum-v1", "--set", f"sac.ent_coef={value}"])
    err = capsys.readouterr().err
    assert code == 2
    assert "sac.ent_coef" in err and "finite" in err


def test_nan_learning_rate_is_refused():  # point 12: every float field, not only ent_coef
    from core.config.errors import ConfigError
    from core.config.validate import validate_config

    with pytest.raises(ConfigError, match="ppo.learning_rate"):
        validate_config({"ppo": {"learning_rate": float("nan")}})
    with pytest.raises(ConfigError, match="runtime.telemetry_hz"):
        validate_config({"runtime": {"telemetry_hz": float("inf")}})


@pytest.mark.parametrize("value", ["nan", "inf", "-3", "0"])
def test_estimate_host_memory_must_be_a_finite_positive_number(value, capsys):  # point 13
    assert main(["estimate", "--algo", "PPO", "--env", "CartPole-v1", "--host-memory-gib", value]) == 2
    err = capsys.readouterr().err
    assert "--host-memory-gib" in err and "Traceback" not in err


def test_control_characters_in_keys_never_break_an_error_into_more_lines(tmp_path, capsys):
    plan = tmp_path / "plan.yaml"
    plan.write_text('jobs:\n- {}\n- {}\n- "\\r\\r": null\n  "a\\nb": 1\n')
    assert main(["queue", "run", str(plan), "--runs-dir", str(tmp_path / "runs")]) != 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("rlpanel queue: ") for line in lines), lines
    assert any("\\r\\r" in line for line in lines) and len(lines) <= 6


@pytest.mark.parametrize("argv", [["train", "--set", "-="], ["train", "--set", "--="], ["train", "--no-such-option"],
                                  ["--nope"], ["estimate", "--timesteps"]])
def test_a_command_line_argparse_refuses_is_two_lines_naming_the_problem_and_returns_2(argv, capsys):
    assert main(argv) == 2  # not SystemExit with a page of usage
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and lines[1].endswith("--help lists the options"), lines
    if argv[1:] == ["--set", "-="]:
        assert "--set=VALUE" in lines[0]  # how to pass a value that starts with '-'
