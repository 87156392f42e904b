"""A real sweep: PPO on CartPole, 6 trials, 2 at once; its runner killed midway and resumed; read by Optuna."""

from __future__ import annotations

import json

import psutil
import pytest

from core.run.status import read_status
from core.run.store import RunStore
from core.sweep.control import sweep_status
from core.sweep.folder import SweepFolder, load_state
from tests.core.sweep.helpers import SMALL_SWEEP, sweep_file
from tests.training_helpers import cli, wait_for

BUDGET = 4000  # each trial's steps in the killed-runner test


def status(runs_dir, name="cartpole-lr") -> dict:
    """``rlpanel sweep status --json``, as a user reads it: what the tests check. Their waits poll ``sweep_status``
    (what the command prints) in this process, not a child that loads Optuna and the CLI for a second of CPU a poll."""
    out = cli("sweep", "status", name, "--json", "--runs-dir", str(runs_dir))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def tagged_runs(runs_dir) -> dict[int, list[str]]:
    """Run folders by the trial number in their status tag: a trial run twice would show two."""
    out: dict[int, list[str]] = {}
    for info in RunStore(runs_dir).list():
        tag = info.status.sweep or {}
        if tag.get("name") == "cartpole-lr":
            out.setdefault(tag["trial"], []).append(info.id)
    return out


@pytest.mark.training
@pytest.mark.timeout(1500)
def test_sweep_survives_a_killed_runner_prunes_and_optuna_reads_it(tmp_path, runs_dir):
    # 4,000 steps: the pruner's first say is at the evaluation at 1,500, and a bad trial must still be running when the
    # runner (a look a second) reads it. With 2,000, a fast machine trained the last 500 steps before the stop
    # landed, and the trial was rightly told complete (``SweepRunner.ended``): no pruned trial was left to check.
    spec = sweep_file(tmp_path, base={**SMALL_SWEEP["base"], "timesteps": BUDGET})
    started = cli("sweep", "run", str(spec), "--detach", "--runs-dir", str(runs_dir))
    assert started.returncode == 0, started.stderr
    # kill the runner once trial 0 is told and a later trial runs: live and ended runs wait for the next runner
    def told_and_third_launched() -> bool:
        trials = sweep_status(runs_dir, "cartpole-lr")["trials"]
        return any(t["state"] == "complete" for t in trials) and len(trials) >= 3
    wait_for(told_and_third_launched, timeout=600, what="a told trial and a third one launched", poll=0.5)
    runner = load_state(SweepFolder(runs_dir, "cartpole-lr"))["runner"]
    psutil.Process(runner["pid"]).kill()  # SIGKILL on POSIX, TerminateProcess on Windows
    wait_for(lambda: sweep_status(runs_dir, "cartpole-lr")["state"] == "crashed", timeout=30, what="the sweep to read crashed")
    resumed = cli("sweep", "resume", "cartpole-lr", "--detach", "--runs-dir", str(runs_dir))
    assert resumed.returncode == 0, resumed.stderr
    wait_for(lambda: sweep_status(runs_dir, "cartpole-lr")["state"] == "finished", timeout=900, what="the sweep to end", poll=0.5)
    report = status(runs_dir)

    assert set(report) >= {"name", "storage", "study_name", "state", "best", "trials"}
    assert [t["number"] for t in report["trials"]] == list(range(6))
    states = [t["state"] for t in report["trials"]]
    assert states.count("complete") >= 2 and "pruned" in states, report["trials"]
    assert set(states) <= {"complete", "pruned"}, report["trials"]
    for row in report["trials"]:
        assert set(row) >= {"number", "state", "value", "params", "run_id"}
        assert set(row["params"]) == {"ppo.learning_rate", "ppo.n_epochs"}
    # no trial ran twice: one run folder per trial, the one its user attrs name
    runs = tagged_runs(runs_dir)
    assert {n: ids for n, ids in runs.items()} == {t["number"]: [t["run_id"]] for t in report["trials"]}
    for row in report["trials"]:
        run_state = read_status(runs_dir / row["run_id"]).state
        assert run_state == ("finished" if row["state"] == "complete" else "stopped"), (row, run_state)
    best = report["best"]
    assert best["params"]["ppo.learning_rate"] == 0.01 and best["value"] > 50

    import optuna

    study = optuna.load_study(study_name=report["study_name"], storage=report["storage"])
    assert len(study.trials) == 6
    assert study.best_trial.user_attrs["run_id"] == best["run_id"]
    pruned = [t for t in study.trials if t.state == optuna.trial.TrialState.PRUNED]
    assert all(max(t.intermediate_values) < BUDGET for t in pruned)  # stopped before the budget's end

    again = cli("sweep", "run", str(spec), "--runs-dir", str(runs_dir))
    assert again.returncode == 1 and "rlpanel sweep resume cartpole-lr" in again.stderr


@pytest.mark.training
@pytest.mark.timeout(600)
def test_a_trial_that_does_not_fit_is_failed_with_the_reason_and_never_launched(tmp_path, runs_dir):
    elsewhere = f"sqlite:///{(tmp_path / 'shared' / 'studies.db').as_posix()}"  # an RDB URL given in the file
    (tmp_path / "shared").mkdir()
    huge = {**SMALL_SWEEP, "space": {"policy.net_arch": {"choice": [[65536, 65536, 65536]]}}, "n_trials": 2, "parallel": 1,
            "storage": elsewhere}
    out = cli("sweep", "run", str(sweep_file(tmp_path, huge)), "--runs-dir", str(runs_dir), timeout=500)
    assert out.returncode == 0, out.stderr
    report = status(runs_dir)
    assert report["storage"] == elsewhere and not (runs_dir / ".sweeps" / "cartpole-lr" / "study.db").exists()
    assert report["state"] == "finished" and [t["state"] for t in report["trials"]] == ["fail", "fail"]
    assert all("does not fit in host RAM" in t["reason"] and t["run_id"] is None for t in report["trials"])
    assert "#0" in out.stdout and "does not fit" in out.stdout
    assert tagged_runs(runs_dir) == {}
    unknown = cli("sweep", "status", "nope", "--runs-dir", str(runs_dir))
    assert unknown.returncode == 1 and "no sweep 'nope'" in unknown.stderr and "known: cartpole-lr" in unknown.stderr
    finished = cli("sweep", "resume", "cartpole-lr", "--runs-dir", str(runs_dir))
    assert finished.returncode == 1 and "is finished" in finished.stderr


@pytest.mark.training
@pytest.mark.timeout(600)
def test_an_env_info_key_is_the_objective(tmp_path, runs_dir):
    """``info.distance``, minimised: the trials record it as an env measure (env.info_keys, added by the sweep),
    the trial's value is its mean."""
    sweep = {**SMALL_SWEEP, "name": "info-sweep", "n_trials": 2, "parallel": 2, "pruner": "none",
             "base": {"algo": "A2C", "env": "tests.core.sweep.info_env:TargetEnv", "timesteps": 600,
                      "set": {"runtime.n_envs": 1, "runtime.seed": 1, "runtime.telemetry_hz": 1, "budget.eval_every": 0,
                              "budget.checkpoint_every": 300}},
             "space": {"a2c.learning_rate": {"choice": [0.01, 1.0e-7]}},
             "objective": {"metric": "info.distance", "direction": "minimize"}}
    out = cli("sweep", "run", str(sweep_file(tmp_path, sweep)), "--runs-dir", str(runs_dir), timeout=500)
    assert out.returncode == 0, out.stderr + out.stdout
    report = status(runs_dir, "info-sweep")
    assert report["state"] == "finished" and [t["state"] for t in report["trials"]] == ["complete", "complete"], report
    from core.sweep.study import objective_value
    from tests.training_helpers import records

    for row in report["trials"]:
        episodes = records(runs_dir / row["run_id"], "episode")
        assert episodes and all(set(e["m"]) == {"distance"} for e in episodes)  # only what info_keys names
        window = [e["m"]["distance"] for e in episodes][-100:]
        assert row["value"] == pytest.approx(sum(window) / len(window))
        assert objective_value(runs_dir / row["run_id"], "info.distance") == pytest.approx(row["value"])
    assert report["best"]["value"] == min(t["value"] for t in report["trials"])


@pytest.mark.training
@pytest.mark.timeout(600)
def test_a_sweep_whose_base_trains_on_sbx_tells_each_trial_its_objective(tmp_path, runs_dir):
    base = SMALL_SWEEP["base"]
    sweep = {**SMALL_SWEEP, "name": "sbx-sweep", "n_trials": 2, "parallel": 2, "pruner": "none",
             "base": {**base, "timesteps": 512, "set": {**base["set"], "runtime.engine": "sbx", "ppo.n_steps": 128,
                                                        "budget.eval_every": 256, "budget.eval_episodes": 2,
                                                        "budget.checkpoint_every": 256}},
             "space": {"ppo.learning_rate": {"choice": [0.01, 1.0e-7]}}}
    out = cli("sweep", "run", str(sweep_file(tmp_path, sweep)), "--runs-dir", str(runs_dir), timeout=500)
    assert out.returncode == 0, out.stderr + out.stdout
    report = status(runs_dir, "sbx-sweep")
    assert report["state"] == "finished" and [t["state"] for t in report["trials"]] == ["complete", "complete"], report
    from core.run.store import load_run_config
    from tests.training_helpers import records

    for row in report["trials"]:
        run = runs_dir / row["run_id"]
        cfg = load_run_config(run)
        assert cfg.runtime.engine == "sbx" and cfg.ppo.learning_rate == row["params"]["ppo.learning_rate"]
        assert row["value"] == records(run, "eval")[-1]["mean_reward"]  # the objective: the last evaluation's mean


@pytest.mark.training
@pytest.mark.timeout(900)
@pytest.mark.parametrize("runner_killed", [False, True], ids=["stop", "stop-after-runner-killed"])
def test_stop_then_resume_continues_the_trials_from_their_checkpoints(tmp_path, runs_dir, runner_killed):
    """``sweep stop`` asks the runner (or, its runner killed, stops the live runs itself); resume continues them."""
    # An env of 10 ms steps while the gate file exists: 4,000 steps take 40 s at least, so a trial past its first
    # checkpoint (500) still has half a minute to go when the stop comes, however fast the machine (6,000 CartPole
    # steps could both finish on a quiet one before `sweep stop` ran, after a killed runner read crashed). The gate
    # is removed before the resume, which then runs the rest at full speed.
    gate = tmp_path / "slow"
    gate.touch()
    base = SMALL_SWEEP["base"]
    env_kwargs = {"steps": 20, "delay_s": 0.01, "slow_while": str(gate)}
    two = {**SMALL_SWEEP, "name": "stop-sweep", "n_trials": 2, "pruner": "none", "sampler": "random", "seed": 2,
           "base": {**base, "env": "tests.core.run.fast_env:FastEpisodesEnv", "timesteps": 4000,
                    "set": {**base["set"], "env.kwargs": env_kwargs}}}
    assert cli("sweep", "run", str(sweep_file(tmp_path, two)), "--detach", "--runs-dir", str(runs_dir)).returncode == 0

    def both_checkpointed():
        rows = sweep_status(runs_dir, "stop-sweep")["trials"]
        return len(rows) == 2 and all(r["run_id"] and (runs_dir / r["run_id"] / "checkpoints" / "latest.json").is_file()
                                      for r in rows) and rows
    rows = wait_for(both_checkpointed, timeout=400, what="both trials to write a checkpoint")
    if runner_killed:
        psutil.Process(load_state(SweepFolder(runs_dir, "stop-sweep"))["runner"]["pid"]).kill()
        wait_for(lambda: sweep_status(runs_dir, "stop-sweep")["state"] == "crashed", timeout=30, what="the sweep to read crashed")
    stopped = cli("sweep", "stop", "stop-sweep", "--runs-dir", str(runs_dir))
    assert stopped.returncode == 0, stopped.stderr
    wait_for(lambda: sweep_status(runs_dir, "stop-sweep")["state"] == "stopped", timeout=300, what="the sweep to stop")
    report = status(runs_dir, "stop-sweep")
    wait_for(lambda: all(read_status(runs_dir / r["run_id"]).state in ("stopped", "finished") for r in rows),
             timeout=300, what="the trials' runs to stop")
    # a trial told complete, or whose run reached its budget before the stop did (told on resume)
    ran_to_the_end = [r for r in report["trials"] if r["state"] == "complete"
                      or read_status(runs_dir / r["run_id"]).state == "finished"]
    for row in report["trials"]:
        if row["state"] == "running" and row not in ran_to_the_end:  # stopped by the sweep: resumable, not told
            assert read_status(runs_dir / row["run_id"]).state == "stopped"
    assert len(ran_to_the_end) < 2, "the stop came too late to test a resume: both trials had finished"

    gate.unlink()
    resumed = cli("sweep", "resume", "stop-sweep", "--runs-dir", str(runs_dir), timeout=600)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    report = status(runs_dir, "stop-sweep")
    assert report["state"] == "finished" and [t["state"] for t in report["trials"]] == ["complete", "complete"]
    assert [t["run_id"] for t in report["trials"]] == [r["run_id"] for r in rows]  # the same runs, continued
    for row in report["trials"]:
        if row["number"] not in {r["number"] for r in ran_to_the_end}:
            assert read_status(runs_dir / row["run_id"]).resumed_from, row
