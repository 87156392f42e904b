"""A real run of an env with 2-step episodes (hundreds a second): metrics.jsonl stays within its bound per
second of training, and its aggregates still give the Monitor's episode count, mean reward and measure."""

from __future__ import annotations

import csv
import json

import pytest

from core.run.episodes import EPISODE_WINDOW_S, EPISODES_PER_S
from core.util.files import read_json
from core.util.jsonl import read_jsonl
from tests.training_helpers import make_run, run_worker

pytestmark = pytest.mark.training
ENV = {"entry_point": "tests.core.run.fast_env:FastEpisodesEnv", "info_keys": ["moves"]}


def _monitor(run) -> list[dict]:
    rows = []
    for path in sorted((run / "monitor").glob("*.csv")):
        with path.open(encoding="utf-8") as fh:
            fh.readline()
            rows += [{"r": float(r["r"]), "moves": float(r["moves"])} for r in csv.DictReader(fh)]
    return rows


@pytest.mark.parametrize("algo", ["PPO", "DQN"])
def test_a_fast_env_keeps_metrics_within_the_bound_and_the_summary_counts_every_episode(runs_dir, algo):
    params = ({"ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}} if algo == "PPO"
              else {"dqn": {"learning_starts": 100, "train_freq": 4, "buffer_size": 5000}})
    run = make_run(runs_dir, {"algo": algo, "env": ENV, **params,
                              "runtime": {"n_envs": 4, "seed": 2, "telemetry_hz": 0, "torch_threads": 1},
                              "budget": {"total_timesteps": 12_000, "checkpoint_every": 0}})
    assert run_worker(run, timeout=600) == 0, (run / "worker.log").read_text()
    recs = read_jsonl(run / "metrics.jsonl")
    monitor = _monitor(run)
    seconds = read_json(run / "status.json")["train_time_s"]
    kinds = [r["kind"] for r in recs]
    singles, aggregates = kinds.count("episode"), kinds.count("episodes")
    size = {k: sum(len(json.dumps(r, separators=(",", ":"))) + 1 for r in recs if r["kind"] == k) for k in set(kinds)}
    # 6,000 episodes in seconds: past the minute's burst they are aggregates, at most one per flush (~1 s)
    assert aggregates and singles <= EPISODES_PER_S * (EPISODE_WINDOW_S + seconds) + 1
    assert aggregates <= seconds + 2 and kinds.count("progress") <= seconds + 2
    assert kinds.count("train") <= seconds + 2  # DQN dumps its logger after every episode: merged to one a second
    # the bound: the burst's single records, then per second of training EPISODES_PER_S singles, one aggregate,
    # one progress and one train record (a single record with its measure is ~90 bytes: ~80 was too tight)
    single = max(len(json.dumps(r, separators=(",", ":"))) + 1 for r in recs if r["kind"] == "episode")
    assert single <= 120, single
    bound = EPISODES_PER_S * (EPISODE_WINDOW_S + seconds) * single + seconds * (400 + 120 + 600) + 4_000
    total = (run / "metrics.jsonl").stat().st_size
    assert total <= bound, (total, bound, size)
    assert total < len(monitor) * 40  # one record per episode would be ~70 bytes each
    summary = read_json(run / "summary.json")
    assert summary["episodes"] == len(monitor) == sum(r.get("n", 1) for r in recs if r["kind"] in ("episode", "episodes"))
    assert summary["all_mean_reward"] == pytest.approx(sum(r["r"] for r in monitor) / len(monitor), abs=1e-4)
    assert summary["all_measures"]["moves"] == pytest.approx(sum(r["moves"] for r in monitor) / len(monitor))
    assert -1.0 <= summary["final_mean_reward"] <= 3.0 and summary["final_window"] == 100


def test_logger_dumps_closer_than_a_second_are_merged_into_one_train_record(tmp_path):
    from core.util.jsonl import JsonlWriter
    from core.worker.callbacks import MetricsWriter

    now = [0.0]
    out = JsonlWriter(tmp_path / "metrics.jsonl")
    writer = MetricsWriter(out, clock=lambda: now[0])
    for t, step, loss in [(0.0, 10, 1.0), (0.3, 20, 2.0), (0.6, 30, float("nan")), (1.1, 40, 4.0), (1.5, 50, 5.0)]:
        now[0] = t
        writer.write({"train/loss": loss, "train/n_updates": step, "rollout/name": "text"}, {}, step)
    assert [(r["step"], r["train/loss"]) for r in read_jsonl(tmp_path / "metrics.jsonl")] == [(10, 1.0), (40, 4.0)]
    writer.close()  # the end of training: the dump not written yet
    recs = read_jsonl(tmp_path / "metrics.jsonl")
    assert [(r["step"], r["train/loss"], r["train/n_updates"]) for r in recs] == [(10, 1.0, 10), (40, 4.0, 40), (50, 5.0, 50)]
    assert all("rollout/name" not in r for r in recs)
    writer.flush()  # nothing more
    assert len(read_jsonl(tmp_path / "metrics.jsonl")) == 3


def test_a_random_baseline_of_a_fast_env_aggregates_too_and_counts_every_episode(runs_dir):
    run = make_run(runs_dir, {"algo": "random", "env": ENV, "runtime": {"n_envs": 4, "seed": 1, "telemetry_hz": 0},
                              "budget": {"episodes": 20_000}})
    assert run_worker(run, timeout=600) == 0, (run / "worker.log").read_text()
    recs = read_jsonl(run / "metrics.jsonl")
    monitor = _monitor(run)
    assert any(r["kind"] == "episodes" for r in recs)
    assert (run / "metrics.jsonl").stat().st_size < len(monitor) * 10  # not a record per episode
    summary = read_json(run / "summary.json")
    # the baseline plays exactly its budget (the Monitor may have finished a few more in the last step)
    assert summary["episodes"] == 20_000 <= len(monitor)
    mean = sum(r["r"] for r in monitor[:20_000]) / 20_000
    assert summary["all_mean_reward"] == pytest.approx(mean, abs=0.05)
    assert summary["all_measures"]["moves"] == pytest.approx(sum(r["moves"] for r in monitor) / len(monitor), abs=0.05)
