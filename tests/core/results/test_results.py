"""The results table: rows from real tiny runs and a random baseline, deltas, crashed and stopped runs."""

from __future__ import annotations

import csv
import io
import json
import shutil
import time
from datetime import date, timedelta

import pytest

from core.results.curves import reward_curve
from core.results.table import COLUMNS, ENGINE_KEYS, OPTIONAL_KEYS, ResultRow, columns_for, results, select_runs
from core.run.store import RunStore
from core.util.files import read_json
from tests.results_helpers import make_result_run
from tests.training_helpers import make_run


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory):
    """Two tiny A2C runs and a random baseline on CartPole, their workers run side by side."""
    from core.launch.control import launch_worker

    runs = tmp_path_factory.mktemp("runs")
    a2c = {"algo": "A2C", "env": {"id": "CartPole-v1"}, "budget": {"total_timesteps": 600}}
    dirs = {"one": make_run(runs, {**a2c, "name": "a2c-one", "runtime": {"seed": 1}}),
            "two": make_run(runs, {**a2c, "name": "a2c-two", "runtime": {"seed": 2}}),
            "base": make_run(runs, {"algo": "random", "name": "base", "env": {"id": "CartPole-v1"},
                                    "budget": {"episodes": 30}, "runtime": {"seed": 3}})}
    procs = [launch_worker(d, reap=False) for d in dirs.values()]
    assert [p.wait(240) for p in procs] == [0, 0, 0], [(d / "worker.log").read_text()[-2000:] for d in dirs.values()]
    return dirs


@pytest.mark.training
def test_rows_of_real_runs_against_a_random_baseline(real_runs):
    rows = results([real_runs["one"], real_runs["two"]], baseline=real_runs["base"])
    assert [r.run_id for r in rows] == [real_runs[k].name for k in ("base", "one", "two")]
    base, one, two = rows
    assert base.is_baseline and base.algo == "random" and base.episodes == 30 and base.name == "base"
    assert (one.algo, one.env, one.name, two.name) == ("A2C", "CartPole-v1", "a2c-one", "a2c-two")
    for row, key in zip(rows, ("base", "one", "two"), strict=True):
        summary = read_json(real_runs[key] / "summary.json")
        assert row.state == "finished" and not row.marked
        assert row.timesteps == summary["timesteps"] and row.episodes == summary["episodes"] > 0
        assert row.final_mean_reward == summary["final_mean_reward"]
        assert row.best_mean_reward == summary["best_mean_reward"]
        if row is base:  # it played episodes, it did not train: no training time or speed
            assert row.wall_time_s is None and row.steps_per_s is None
            continue
        # wall time in ms
        assert row.wall_time_s > 0 and row.steps_per_s == pytest.approx(row.timesteps / row.wall_time_s, rel=0.05)
    assert one.timesteps >= 600 and two.timesteps >= 600
    for row in rows:
        assert row.delta_reward == row.final_mean_reward - base.final_mean_reward
        assert row.delta_reward_pct == pytest.approx(100 * row.delta_reward / abs(base.final_mean_reward))
    assert base.delta_reward == 0.0
    # no NVML here: no energy, so no energy or CO2 column; one host memory measure, named in its header; the real
    # runs' time split (issue 31) is shown
    split = ("collect_pct", "train_pct")
    assert [c.key for c in columns_for(rows) if c.kind != "setting"] == [
        c.key for c in COLUMNS if c.key not in (*OPTIONAL_KEYS, *ENGINE_KEYS, "host_memory_measure") or c.key in split]
    assert all(0 < r.collect_pct < 100 and 0 < r.train_pct < 100 for r in (one, two)) and base.collect_pct is None
    assert {c.key: c.title for c in columns_for(rows)}["peak_host_memory_mib"] == "Peak host memory, this run, PSS (MiB)"
    for row, key in ((one, "one"), (two, "two")):  # the baseline plays without telemetry
        summary = read_json(real_runs[key] / "summary.json")
        assert (summary["host_memory_measure"], row.host_memory_measure) == ("pss", "PSS")
        assert row.peak_host_memory_mib == summary["peak_host_memory_bytes"] / 2**20 > 0
    assert [c.title for c in columns_for(rows) if c.kind == "setting"] == ["runtime.seed"]


@pytest.mark.training
def test_a_run_without_summary_gets_the_same_numbers_from_its_records(real_runs, tmp_path):
    """A crashed worker writes no summary.json: the row is computed from metrics + status."""
    copy = tmp_path / real_runs["one"].name
    shutil.copytree(real_runs["one"], copy, ignore=shutil.ignore_patterns("checkpoints", "tb", "sb3"))
    (copy / "summary.json").unlink()
    want, got = results([real_runs["one"]])[0], results([copy])[0]
    for key in ("timesteps", "episodes", "final_mean_reward", "best_mean_reward"):
        assert getattr(got, key) == getattr(want, key), key
    assert got.wall_time_s == pytest.approx(want.wall_time_s, abs=1e-3)  # summary.json rounds it to ms


def test_crashed_and_stopped_runs_are_included_and_marked(runs_dir):
    fin = make_result_run(runs_dir, "fin", [10.0] * 5)
    crashed = make_result_run(runs_dir, "boom", [float(i) for i in range(150)], state="crashed", gpu_peak_bytes=3 * 2**30)
    stopped = make_result_run(runs_dir, "cut", [20.0, 30.0], state="stopped", evals=[(25.0, 2.5)])
    rows = results([fin, crashed, stopped], baseline=fin)
    assert [(r.name, r.state, r.marked) for r in rows] == [("fin", "finished", False), ("boom", "crashed", True),
                                                         ("cut", "stopped", True)]
    boom = rows[1]
    assert not (crashed / "summary.json").exists()
    assert boom.episodes == 150 and boom.timesteps == 150 * 20
    assert boom.final_mean_reward == sum(range(50, 150)) / 100  # the last 100 episodes
    assert boom.best_mean_reward == boom.final_mean_reward
    assert boom.wall_time_s == pytest.approx(150 * 0.5) and boom.steps_per_s == pytest.approx(40.0)
    assert boom.peak_gpu_memory_mib == 3 * 1024 and boom.peak_temperature_c == 71.0
    assert boom.delta_reward == 99.5 - 10.0 and boom.delta_reward_pct == pytest.approx(895.0)
    cut = rows[2]
    assert (cut.final_mean_reward, cut.eval_mean_reward, cut.eval_std_reward) == (25.0, 25.0, 2.5)
    assert cut.to_json()["marked"] is True


def test_a_resumed_run_that_crashed_ignores_its_stale_summary(runs_dir):
    run = make_result_run(runs_dir, "again", [1.0, 2.0], state="stopped")
    with open(run / "metrics.jsonl", "a", encoding="utf-8") as fh:  # the resumed attempt played two more episodes, then died
        for i, r in enumerate((7.0, 8.0)):
            fh.write(json.dumps({"kind": "episode", "step": 100 + 20 * i, "t": time.time(), "reward": r, "length": 20}) + "\n")
    status = json.loads((run / "status.json").read_text())
    status.update(state="running", pid=None)
    (run / "status.json").write_text(json.dumps(status))
    row = results([run])[0]
    assert row.state == "crashed" and row.episodes == 4 and row.final_mean_reward == 4.5


def test_baseline_zero_or_without_episodes_gives_no_per_cent(runs_dir):
    zero = make_result_run(runs_dir, "zero", [0.0, 0.0])
    empty = make_result_run(runs_dir, "empty", [], state="crashed")
    run = make_result_run(runs_dir, "run", [5.0])
    rows = results([run], baseline=zero)
    assert (rows[1].delta_reward, rows[1].delta_reward_pct) == (5.0, None)
    rows = results([run], baseline=empty)
    assert rows[0].final_mean_reward is None and (rows[1].delta_reward, rows[1].delta_reward_pct) == (None, None)
    negative = make_result_run(runs_dir, "neg", [-200.0])
    rows = results([run], baseline=negative)
    assert rows[1].delta_reward == 205.0 and rows[1].delta_reward_pct == pytest.approx(102.5)  # per cent of |baseline|


def test_select_runs_by_id_all_since_and_state(runs_dir):
    old = make_result_run(runs_dir, "old", [1.0], started_at=time.time() - 5 * 86400)
    mid = make_result_run(runs_dir, "mid", [1.0], state="crashed", started_at=time.time() - 3600)
    new = make_result_run(runs_dir, "new", [1.0], started_at=time.time() - 60)
    store = RunStore(runs_dir)
    assert select_runs(store, ids=[new.name, old.name]) == [new, old]
    assert select_runs(store, all=True) == [old, mid, new]  # oldest first: the order the night ran in
    assert select_runs(store) == []
    since = date.today() - timedelta(days=1)
    assert old not in select_runs(store, all=True, since=since)
    assert select_runs(store, all=True, states=["crashed"]) == [mid]
    with pytest.raises(KeyError, match="no run"):
        select_runs(store, ids=["no-such-run"])


def test_reward_curve_is_the_rolling_mean_on_steps_and_seconds(runs_dir):
    run = make_result_run(runs_dir, "curve", [0.0, 10.0, 20.0], seconds_per_episode=2.0)
    curve = reward_curve(run)
    assert curve.steps == [20.0, 40.0, 60.0] and curve.seconds == [2.0, 4.0, 6.0]
    assert curve.mean_reward == [0.0, 5.0, 10.0] and curve.label == f"curve ({run.name})"


def test_the_curves_of_a_group_of_seeds_are_named_by_their_seed(runs_dir):
    from core.results.curves import legend_labels
    from core.run.status import write_status

    runs = []
    for seed in range(2):  # a group's runs share their config's name
        runs.append(make_result_run(runs_dir, "ppo2", [1.0, 2.0], settings={"runtime.seed": seed}))
        write_status(runs[-1], group={"id": "g-ppo2", "seed": seed, "size": 2, "name": "ppo2"})
    runs += [make_result_run(runs_dir, "night", [1.0]), make_result_run(runs_dir, "night", [2.0]),
             make_result_run(runs_dir, "alone", [3.0])]
    curves = [reward_curve(run) for run in runs]
    assert [c.seed for c in curves] == [0, 1, None, None, None]
    # the seed where a group's runs share a name (its id read "ppo2 (20261128-...-ppo2-2)"); the id where that is all
    assert legend_labels(curves) == ["ppo2, seed 0", "ppo2, seed 1", f"night ({runs[2].name})", f"night ({runs[3].name})",
                                     "alone"]


def test_row_values_for_every_column():
    row = ResultRow("id", None, "PPO", "Pendulum-v1", None, "finished")
    assert all(hasattr(row, c.key) for c in COLUMNS)
    assert [c.key for c in columns_for([row])] == [  # no host memory: no measure to name
        c.key for c in COLUMNS if not c.key.startswith("delta") and c.key not in (*OPTIONAL_KEYS, *ENGINE_KEYS,
                                                                                  "host_memory_measure")]
    row.engine = "sbx"  # a JAX run among the rows: the Engine column, beside the algorithm
    assert [c.key for c in columns_for([row])][2:5] == ["algo", "engine", "env"]
    row.engine = "sb3"
    row.energy_kwh = 0.25
    assert "energy_kwh" in [c.key for c in columns_for([row])] and "co2_kg" not in [c.key for c in columns_for([row])]


def test_the_table_names_the_settings_in_which_the_runs_differ(runs_dir):
    slow = make_result_run(runs_dir, "slow", [1.0], settings={"a2c.learning_rate": 0.0001, "runtime.seed": 1})
    fast = make_result_run(runs_dir, "fast", [2.0], settings={"a2c.learning_rate": 0.003, "runtime.seed": 1,
                                                               "policy.net_arch": [256, 256]})
    ppo = make_result_run(runs_dir, "ppo", [3.0], algo="PPO", settings={"runtime.seed": 1})
    base = make_result_run(runs_dir, "base", [0.5], algo="random")
    rows = {r.name: r for r in results([slow, fast, ppo], baseline=base)}
    # the A2C setting compares the two A2C runs; ppo.* is the PPO run's alone; the name is its own column
    assert rows["slow"].differs == "a2c.learning_rate=0.0001, policy.net_arch=null"
    assert rows["fast"].differs == "a2c.learning_rate=0.003, policy.net_arch=[256, 256]"
    assert rows["ppo"].differs == "policy.net_arch=null"
    assert rows["base"].differs == ""  # a baseline differs by design
    # one column per setting that differs, holding each run's own value (nothing for a run without it)
    cols = [c for c in columns_for(list(rows.values())) if c.kind == "setting"]
    assert [c.title for c in cols] == ["a2c.learning_rate", "policy.net_arch"]
    assert [rows["slow"].value(c.key) for c in cols] == [0.0001, None]
    assert [rows["fast"].value(c.key) for c in cols] == [0.003, [256, 256]]
    assert rows["base"].value(cols[0].key) is None
    same = results([slow, make_result_run(runs_dir, "again", [1.0], settings={"a2c.learning_rate": 0.0001, "runtime.seed": 1})])
    assert [r.differs for r in same] == ["", ""] and not [c for c in columns_for(same) if c.kind == "setting"]
    assert "settings" not in same[0].to_json()


def test_a_baseline_row_has_no_training_budget_or_training_time(runs_dir):
    from core.results.export import EMPTY, to_csv, to_markdown

    short = make_result_run(runs_dir, "short", [1.0], settings={"budget.total_timesteps": 5_000})
    long = make_result_run(runs_dir, "long", [2.0], settings={"budget.total_timesteps": 50_000})
    base = make_result_run(runs_dir, "base", [0.5], algo="random", settings={"budget.total_timesteps": 100_000})
    rows = results([short, long], baseline=base)
    cols = {c.key: c for c in columns_for(rows)}
    budget = cols["setting:budget.total_timesteps"]
    assert [r.value(budget.key) for r in rows] == [None, 5_000, 50_000]  # not "100000": a baseline trains no steps
    assert rows[0].wall_time_s is None and rows[0].steps_per_s is None  # not "0.0": it did not train
    assert rows[0].timesteps == 20 and rows[0].episodes == 1  # the steps it played are its own
    csv_rows = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert [r[budget.title] for r in csv_rows] == ["", "5000", "50000"]
    assert (csv_rows[0]["Wall time (s)"], csv_rows[0]["Steps/s"]) == ("", "")
    base_line = to_markdown(rows).splitlines()[2].split(" | ")
    titles = [c.title for c in columns_for(rows)]
    for title in (budget.title, "Wall time (s)", "Steps/s"):
        assert base_line[titles.index(title)].strip(" |") == EMPTY


def test_the_delta_compares_evaluations_when_both_runs_have_them(runs_dir):
    """A SAC run whose training episodes trail a random baseline but whose evaluations beat it."""
    base = make_result_run(runs_dir, "random", [-200.0 + 10 * (i % 2) for i in range(20)], algo="random")
    sac = make_result_run(runs_dir, "sac", [-500.0] * 61, algo="SAC", env="Pendulum-v1",
                          evals=[(-300.0, 50.0), (-150.0, 20.0)], eval_episodes=10)
    base_row, row = results([sac], baseline=base)
    assert (base_row.eval_mean_reward, base_row.eval_std_reward, base_row.eval_episodes) == (-195.0, 5.0, 20)
    assert row.delta_reward == pytest.approx(45.0) and row.delta_reward_pct == pytest.approx(100 * 45 / 195)
    assert row.delta_basis == "eval 10 vs 20 ep"
    assert row.delta_se == pytest.approx((20.0**2 / 10 + 5.0**2 / 20) ** 0.5)
    # without an evaluation of its own the run is compared on its last training episodes, and says so
    a2c = make_result_run(runs_dir, "a2c", [-190.0] * 30)
    _, row = results([a2c], baseline=base)
    assert row.delta_reward == pytest.approx(-190.0 - (-195.0)) and row.delta_basis == "training, last 30 vs 20 ep"


def test_headers_name_the_episodes_behind_the_means(runs_dir):
    few = make_result_run(runs_dir, "few", [1.0] * 20)
    more = make_result_run(runs_dir, "more", [1.0] * 61)
    many = make_result_run(runs_dir, "many", [1.0] * 150)
    titles = lambda runs: [c.title for c in columns_for(results(runs)) if c.key in ("final_mean_reward", "best_mean_reward")]  # noqa: E731
    assert titles([few]) == ["Final mean reward (last 20 ep)", "Best rolling mean (20 ep)"]
    assert titles([few, more]) == ["Final mean reward (last 20-61 ep)", "Best rolling mean (20-61 ep)"]
    assert titles([many]) == ["Final mean reward (last 100 ep)", "Best rolling mean (100 ep)"]


def test_the_runs_own_peak_gpu_memory_beside_the_whole_gpus(runs_dir):
    run = make_result_run(runs_dir, "gpu", [1.0], gpu_peak_bytes=3686 * 2**20, process_peak_bytes=829 * 2**20)
    (row,) = results([run])
    assert (row.peak_run_gpu_memory_mib, row.peak_gpu_memory_mib) == (829.0, 3686.0)
    titles = {c.key: c.title for c in columns_for([row])}
    assert titles["peak_run_gpu_memory_mib"] == "Peak GPU memory, this run's processes (MiB)"
    assert titles["peak_gpu_memory_mib"] == "Peak GPU memory, whole card incl. driver reserve (MiB)"
    keys = [c.key for c in columns_for([row])]
    assert keys.index("peak_run_gpu_memory_mib") < keys.index("peak_gpu_memory_mib")  # the run's own figure leads
