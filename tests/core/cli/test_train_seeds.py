"""``rlpanel train --seeds``: a group of real runs (the random baseline: the cheapest real launch), listed and
filtered by ``rlpanel runs``."""

from __future__ import annotations

import json

import pytest

from core.run.status import read_status
from core.run.store import load_run_config
from core.util.files import read_json
from tests.training_helpers import cli


@pytest.mark.training
def test_train_with_seeds_runs_a_group_to_its_end_and_runs_lists_it(runs_dir):
    done = cli("train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "2", "--seeds", "2", "--json",
               "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["seeds"] == [0, 1] and out["name"] == "random CartPole-v1" and "-random-cartpole-v1-x2-" in out["group"]
    assert [r["seed"] for r in out["runs"]] == [0, 1] and [r["state"] for r in out["runs"]] == ["finished", "finished"]
    assert f"group {out['group']}: 2 runs of random CartPole-v1 (seeds 0, 1), all at once" in done.stderr
    assert "(seed 1): finished" in done.stderr  # each run's end is said as it comes
    for run in out["runs"]:
        status = read_status(runs_dir / run["id"])
        assert status.state == "finished" and run["id"].endswith(f"-s{run['seed']}")
        assert status.group == {"id": out["group"], "seed": run["seed"], "size": 2, "name": "random CartPole-v1"}
        assert load_run_config(runs_dir / run["id"]).runtime.seed == run["seed"]

    alone = cli("train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "1", "--detach", "--runs-dir",
                str(runs_dir))
    assert alone.returncode == 0, alone.stderr
    listed = cli("runs", "--runs-dir", str(runs_dir))
    lines = listed.stdout.splitlines()
    assert "GROUP" in lines[0].split()
    assert sum(out["group"] in line for line in lines) == 2
    grouped = json.loads(cli("runs", "--group", out["group"][:-5], "--json", "--runs-dir", str(runs_dir)).stdout)
    assert sorted(r["id"] for r in grouped) == sorted(r["id"] for r in out["runs"])
    assert {r["group"]["id"] for r in grouped} == {out["group"]}
    one = cli("runs", out["runs"][1]["id"], "--runs-dir", str(runs_dir)).stdout
    assert f"group: {out['group']} (seed 1 of 2 runs; rlpanel runs --group {out['group']})" in one
    unknown = cli("runs", "--group", "nope", "--runs-dir", str(runs_dir))
    assert unknown.returncode == 2 and f"--group 'nope' matches no group; groups here: {out['group']}" in unknown.stderr


def test_bad_seeds_are_refused_before_anything_starts(runs_dir):
    # every bad form is tested in-process (tests/core/config/test_seeds.py); here the command's words and exit
    refused = cli("train", "--algo", "random", "--env", "CartPole-v1", "--seeds", "3,3", "--runs-dir", str(runs_dir))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip() == "rlpanel train: --seeds: seed 3 is given twice: each run of a group needs its own seed"
    assert list(runs_dir.iterdir()) == []


@pytest.mark.training
def test_a_group_of_sbx_seeds_gets_its_statistics_and_the_morning_report_names_the_engine(runs_dir):
    done = cli("train", "--algo", "PPO", "--env", "CartPole-v1", "--timesteps", "256", "--seeds", "2", "--set",
               "runtime.engine=sbx", "--set", "ppo.n_steps=64", "--set", "ppo.batch_size=64", "--set", "ppo.n_epochs=1",
               "--set", "budget.eval_every=128", "--set", "budget.eval_episodes=2", "--json", "--runs-dir", str(runs_dir))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [r["state"] for r in out["runs"]] == ["finished", "finished"]
    assert {load_run_config(runs_dir / r["id"]).runtime.engine for r in out["runs"]} == {"sbx"}

    grouped = cli("export", "--all", "--group-by", "group", "--format", "json", "--runs-dir", str(runs_dir))
    assert grouped.returncode == 0, grouped.stderr
    [group] = json.loads(grouped.stdout)["groups"]
    assert (group["engine"], group["n"], group["seeds"], group["state"]) == ("sbx", 2, [0, 1], "finished")
    evals = [read_json(runs_dir / r["id"] / "summary.json")["last_eval_mean_reward"] for r in out["runs"]]
    assert sorted(group["values"]) == sorted(evals) and group["mean"] == pytest.approx(sum(evals) / 2)
    assert group["iqm"] is not None and group["ci95"] is not None  # two runs: an interval

    report = cli("report", "--since", "2000-01-01", "--json", "--runs-dir", str(runs_dir))
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert [r["engine"] for r in data["rows"]] == ["sbx", "sbx"] and data["groups"]["groups"][0]["engine"] == "sbx"
    text = cli("report", "--since", "2000-01-01", "--format", "md", "--runs-dir", str(runs_dir)).stdout
    header = next(line for line in text.splitlines() if line.startswith("| Run"))
    assert "| Algorithm | Engine | Env |" in header, header
