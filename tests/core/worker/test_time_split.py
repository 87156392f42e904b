"""Where the time goes (issue 31): real workers split each update cycle into collecting, training and the rest.

Three short real runs, each trained once for the module: a slow env (3 ms a step) that waits on collecting, a big
network trained 20 epochs on small batches that waits on training, and DQN with train_freq 1 (a cycle every step).
"""

from __future__ import annotations

import json
import math

import pytest

from core.cli.main import main
from core.results.table import columns_for, result_row
from core.run.records import well_formed
from core.run.status import read_status
from core.run.time_split import TimeSplit, split_of
from core.util.files import read_json
from core.util.jsonl import read_jsonl
from tests.training_helpers import make_run, records, run_worker

SLOW_ENV = {"entry_point": "tests.core.run.fast_env:FastEpisodesEnv", "kwargs": {"steps": 20, "delay_s": 0.003}}


def _trained(folder, raw: dict):
    run = make_run(folder, raw)
    assert run_worker(run) == 0, (run / "worker.log").read_text()
    assert read_status(run).state == "finished", (run / "worker.log").read_text()
    return run


@pytest.fixture(scope="module")
def slow_run(tmp_path_factory):
    return _trained(tmp_path_factory.mktemp("slow") / "runs", {
        "algo": "PPO", "env": SLOW_ENV, "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "runtime": {"n_envs": 1}, "budget": {"total_timesteps": 256}})


@pytest.fixture(scope="module")
def heavy_run(tmp_path_factory):
    return _trained(tmp_path_factory.mktemp("heavy") / "runs", {
        "algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 8, "n_epochs": 20}, "policy": {"net_arch": [256, 256]},
        "runtime": {"n_envs": 1, "vec_env": "dummy"}, "budget": {"total_timesteps": 256}})


@pytest.fixture(scope="module")
def dqn_run(tmp_path_factory):
    return _trained(tmp_path_factory.mktemp("dqn") / "runs", {
        "algo": "DQN", "dqn": {"train_freq": 1, "learning_starts": 100, "buffer_size": 2000, "batch_size": 32},
        "runtime": {"n_envs": 1, "vec_env": "dummy"}, "budget": {"total_timesteps": 600}})


def _split(run) -> TimeSplit:
    split = TimeSplit.from_json(read_json(run / "summary.json")["time_split"])
    assert split is not None
    return split


def test_a_slow_env_spends_its_time_collecting(slow_run):
    split = _split(slow_run)
    assert split.collect_s > 3 * split.train_s, split
    assert split.shares()[0] > 0.5
    cycles = records(slow_run, "cycle")
    assert cycles and all(well_formed(r) for r in cycles)
    assert sum(r["n"] for r in cycles) == 4  # 256 steps in rollouts of 64
    assert "gpu_collect_pct" not in cycles[0]  # a CPU run has no GPU figure
    assert split.gpu_collect_pct is None and split.gpu_train_pct is None


def test_a_big_network_with_many_epochs_spends_its_time_training(heavy_run):
    split = _split(heavy_run)
    assert split.train_s > split.collect_s, split


@pytest.mark.parametrize("which", ["slow_run", "heavy_run", "dqn_run"])
def test_the_three_parts_add_up_to_the_learning_time(which, request):
    run = request.getfixturevalue(which)
    split = _split(run)
    wall = read_json(run / "summary.json")["wall_time_s"]  # the worker's time in training, the final checkpoint too
    assert split.total_s <= wall + 0.003  # each of the three parts and the wall time are written to the ms
    assert math.isclose(split.total_s, wall, rel_tol=0.05), (split.total_s, wall)
    assert min(split.collect_s, split.train_s, split.other_s) >= 0
    assert read_status(run).time_split == read_json(run / "summary.json")["time_split"]  # status keeps the last totals


def test_an_off_policy_run_is_split_per_train_freq_cycle_in_bounded_records(dqn_run):
    cycles = records(dqn_run, "cycle")
    counted = sum(r["n"] for r in cycles)
    assert 599 <= counted <= 601  # train_freq 1: a cycle every step (a first one ends at the first rollout start)
    wall = read_json(dqn_run / "summary.json")["wall_time_s"]
    assert len(cycles) <= wall / 1.0 + 2  # merged to about one record a second
    assert len(cycles) < counted / 10
    split = _split(dqn_run)
    assert split.train_s > 0 and split.collect_s > 0  # gradient steps after learning_starts, env steps all along


def test_rlpanel_runs_says_where_the_time_went_and_what_would_help(slow_run, capsys):
    runs_dir = str(slow_run.parent)
    assert main(["runs", "--runs-dir", runs_dir, slow_run.name]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if ln.startswith("time: "))
    assert "collecting" in line and "training" in line and "other" in line
    advice = next(ln for ln in text.splitlines() if ln.startswith("advice: "))
    assert "Collecting takes" in advice and "n_envs" in advice and "rollout" in advice
    assert main(["runs", "--runs-dir", runs_dir, slow_run.name, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["summary"]["time_split"]) >= {"collect_s", "train_s", "other_s", "gpu_util_collect_pct",
                                                  "gpu_util_train_pct"}


def test_results_show_the_shares_as_columns(slow_run, heavy_run):
    rows = [result_row(slow_run), result_row(heavy_run)]
    assert rows[0].collect_pct > 50 and rows[1].train_pct > rows[1].collect_pct
    assert {"collect_pct", "train_pct"} <= {c.key for c in columns_for(rows)}
    assert split_of(read_jsonl(slow_run / "metrics.jsonl")).n == 4
