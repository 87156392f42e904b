"""Sweeps whose trials are groups of runs: seeds per trial, two envs in one objective, a seed's run that fails.

One module-scoped fixture runs three small sweeps at once (real PPO runs of 512 steps) and kills the seeded sweep's
runner once its first trial's runs exist; the tests read what ``rlpanel sweep status --json`` says of them.
"""

from __future__ import annotations

import json
import os
import statistics

import psutil
import pytest

from core.results.stats import aggregate
from core.run.layout import RunDir
from core.run.status import read_status
from core.run.store import RunStore, load_run_config
from core.sweep.control import start_sweep, sweep_status
from core.sweep.folder import SweepFolder, load_state
from core.sweep.spec import parse_sweep
from tests.conftest import kill_detached
from tests.core.sweep.helpers import SMALL_SWEEP, sweep_file
from tests.training_helpers import cli, wait_for

SET = {**SMALL_SWEEP["base"]["set"], "ppo.n_steps": 128, "budget.eval_every": 256, "budget.checkpoint_every": 256}
BASE = {"algo": "PPO", "timesteps": 512, "set": SET}
SEEDED = {**SMALL_SWEEP, "name": "seeded", "seeds": 2, "n_trials": 2, "parallel": 2, "pruner": "none",
          "base": {**BASE, "env": "CartPole-v1"}}
# CartPole's baseline is the folder's random run, Acrobot's the score given; both scaled to a reference
TWO_ENVS = {**SMALL_SWEEP, "name": "two-envs", "n_trials": 1, "parallel": 1, "pruner": "none", "base": BASE,
            "envs": [{"id": "CartPole-v1", "reference": 500}, {"id": "Acrobot-v1", "baseline": -500, "reference": -100}],
            "space": {"ppo.learning_rate": {"choice": [0.01]}}}
# a run of the trial fails (no such env): the trial fails with it, never judged on its CartPole run alone
BROKEN = {**TWO_ENVS, "name": "broken-env",
          "envs": [{"id": "CartPole-v1", "baseline": 20}, {"id": "NoSuchEnv-v0", "baseline": -500}]}


def read_report(runs, name: str) -> dict:
    out = cli("sweep", "status", name, "--json", "--runs-dir", str(runs))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def summary_objective(run_dir) -> float:
    return json.loads(RunDir(run_dir).summary.read_text())["last_eval_mean_reward"]


def first_trial_runs(runs) -> int:
    trials = sweep_status(runs, "seeded")["trials"]
    return len(trials[0]["runs"]) if trials else 0


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    home = tmp_path_factory.mktemp("sweep_groups")
    runs = home / "runs"
    old = os.environ.get("RLPANEL_HOME")
    os.environ["RLPANEL_HOME"] = str(home)
    try:
        base = cli("train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "10", "--runs-dir", str(runs))
        assert base.returncode == 0, base.stderr
        for data in (TWO_ENVS, BROKEN):
            start_sweep(runs, parse_sweep(data), reap=True)
        # seeded last, from the command line: its runner must still be going when it is killed below
        out = cli("sweep", "run", str(sweep_file(home, SEEDED)), "--detach", "--runs-dir", str(runs))
        assert out.returncode == 0, out.stderr
        # the runner dies once trial 0's two runs exist: a resumed runner must keep each trial's group whole
        wait_for(lambda: first_trial_runs(runs) == 2, timeout=300, what="trial 0's runs", poll=0.3)
        psutil.Process(load_state(SweepFolder(runs, "seeded"))["runner"]["pid"]).kill()
        wait_for(lambda: sweep_status(runs, "seeded")["state"] == "crashed", timeout=30, what="the sweep to read crashed")
        assert cli("sweep", "resume", "seeded", "--detach", "--runs-dir", str(runs)).returncode == 0
        for name in ("seeded", "two-envs", "broken-env"):
            wait_for(lambda n=name: sweep_status(runs, n)["state"] == "finished", timeout=900, what=f"{name} to end",
                     poll=1.0)
        yield {"runs": runs, **{name: read_report(runs, name) for name in ("seeded", "two-envs", "broken-env")}}
    finally:
        kill_detached(str(home))
        if old is None:
            os.environ.pop("RLPANEL_HOME", None)
        else:
            os.environ["RLPANEL_HOME"] = old


@pytest.mark.training
@pytest.mark.timeout(1200)
def test_each_trial_is_the_mean_of_its_two_seeds_with_its_interval(sweeps):
    runs, report = sweeps["runs"], sweeps["seeded"]
    assert report["seeds"] == [0, 1] and report["runs_per_trial"] == 2
    assert [t["state"] for t in report["trials"]] == ["complete", "complete"], report["trials"]
    for row in report["trials"]:
        assert row["n"] == 2 and set(row["runs"]) == {"s0", "s1"}
        values = [summary_objective(runs / row["runs"][k]) for k in ("s0", "s1")]
        assert row["value"] == pytest.approx(statistics.mean(values))
        expected = aggregate(values)
        assert row["se"] == pytest.approx(expected.se) and row["ci95"] == pytest.approx(list(expected.ci95))
        assert row["ci95"][0] <= row["value"] <= row["ci95"][1]
        seeds = [load_run_config(runs / row["runs"][k]).runtime.seed for k in ("s0", "s1")]
        assert seeds == [0, 1]
        groups = {read_status(runs / run_id).group["id"] for run_id in row["runs"].values()}
        assert len(groups) == 1  # the Results tab shows the trial's seeds as one group


@pytest.mark.training
@pytest.mark.timeout(1200)
def test_the_best_is_shown_with_its_interval_and_the_runner_ups(sweeps):
    report = sweeps["seeded"]
    best, rows = report["best"], report["trials"]
    top = max(rows, key=lambda r: r["value"])
    assert best["number"] == top["number"] and best["ci95"] == top["ci95"] and best["n"] == 2
    other = next(r for r in rows if r["number"] != top["number"])
    assert best["runner_up"]["number"] == other["number"] and best["runner_up"]["ci95"] == other["ci95"]
    overlap = best["ci95"][0] <= other["ci95"][1] and other["ci95"][0] <= best["ci95"][1]
    assert ("the top 2 are not separated at 2 seeds" in best["separation"]) == overlap, best
    text = cli("sweep", "status", "seeded", "--runs-dir", str(sweeps["runs"])).stdout
    assert f"runner-up #{other['number']}" in text and best["separation"] in text and " n=2" in text


@pytest.mark.training
@pytest.mark.timeout(1200)
def test_a_killed_runner_leaves_each_trial_whole(sweeps):
    runs = sweeps["runs"]
    assert load_state(SweepFolder(runs, "seeded"))["restarts"] == 1
    tagged: dict[int, list[str]] = {}
    for info in RunStore(runs).list():
        tag = info.status.sweep or {}
        if tag.get("name") == "seeded":
            tagged.setdefault(tag["trial"], []).append(tag["member"])
    assert {n: sorted(m) for n, m in tagged.items()} == {0: ["s0", "s1"], 1: ["s0", "s1"]}  # no run twice


@pytest.mark.training
@pytest.mark.timeout(1200)
def test_two_envs_give_the_normalised_aggregate_and_each_envs_values(sweeps):
    runs, report = sweeps["runs"], sweeps["two-envs"]
    (row,) = report["trials"]
    assert row["state"] == "complete" and row["n"] == 2 and set(row["per_env"]) == {"CartPole-v1", "Acrobot-v1"}
    random_run = next(i.path for i in RunStore(runs).list() if i.algo == "random")
    baseline = json.loads(RunDir(random_run).summary.read_text())["all_mean_reward"]
    scales = {"CartPole-v1": (baseline, 500 - baseline), "Acrobot-v1": (-500.0, 400.0)}
    normalised = []
    for env, (b, divisor) in scales.items():
        raw = summary_objective(runs / row["runs"][env])
        assert row["per_env"][env]["mean"] == pytest.approx(raw) and row["per_env"][env]["n"] == 1
        assert row["per_env"][env]["normalised"] == pytest.approx((raw - b) / divisor)
        normalised.append((raw - b) / divisor)
    assert row["value"] == pytest.approx(statistics.mean(normalised))
    assert set(report["normalisation"]) == {"CartPole-v1", "Acrobot-v1"}
    assert random_run.name in report["normalisation"]["CartPole-v1"] and "reference 500" in report["normalisation"]["CartPole-v1"]
    text = cli("sweep", "status", "two-envs", "--runs-dir", str(runs)).stdout
    assert "Acrobot-v1:" in text and "normalised" in text


@pytest.mark.training
@pytest.mark.timeout(1200)
def test_a_failed_run_fails_its_trial_never_averaged_over_the_rest(sweeps):
    (row,) = sweeps["broken-env"]["trials"]
    assert row["state"] == "fail" and row["value"] is None and row["n"] == 0
    failed = row["runs"]["NoSuchEnv-v0"]
    assert f"run {failed} failed" in row["reason"]
    assert read_status(sweeps["runs"] / row["runs"]["CartPole-v1"]).state in ("stopped", "finished")
