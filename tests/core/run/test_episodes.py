"""Episode records and their aggregates (core.run.episodes): the limiter's rate, the aggregate's fields, and
every reader giving the same episode count and rewards from either form."""

from __future__ import annotations

import json
import math
import random
import statistics

import pytest

from core.run import records
from core.run.episodes import (
    EPISODE_WINDOW_S,
    EPISODES_PER_S,
    REWARD_WINDOW,
    EpisodeLimiter,
    episode_groups,
    last_window,
    weighted_mean,
)
from core.run.summary import summarize_records
from tests.results_helpers import rolling_means


def _episodes(n: int, seed: int = 1, measures: bool = True) -> list[dict]:
    rng = random.Random(seed)
    return [records.episode(5 * i, rng.uniform(-10, 30), rng.randint(1, 9), t=1000.0 + i,
                            measures={"co2_kg": rng.uniform(0, 2)} if measures else None) for i in range(1, n + 1)]


def _aggregated(eps: list[dict], sizes: list[int]) -> list[dict]:
    """``eps`` cut into records of the given sizes in turn (size 1: the episode's own record)."""
    out, i, k = [], 0, 0
    while i < len(eps):
        chunk = eps[i:i + sizes[k % len(sizes)]]
        out.append(chunk[0] if len(chunk) == 1 else records.episodes(chunk))
        i, k = i + len(chunk), k + 1
    return out


def test_the_limiter_writes_one_record_per_episode_at_the_rate_and_aggregates_past_it():
    now = [0.0]
    limiter = EpisodeLimiter(clock=lambda: now[0])
    slow = [records.episode(i, 1.0, 3) for i in range(int(EPISODES_PER_S))]
    for _ in range(300):  # at the rate, flushed each second, for five minutes: a record each
        now[0] += 1.0
        assert limiter.take(list(slow)) == slow
    singles = aggregates = 0
    fast = [records.episode(i, float(i % 7), 2) for i in range(200)]
    for _ in range(600):  # 200 a second for ten minutes
        now[0] += 1.0
        out = limiter.take(list(fast))
        kept = [r for r in out if r["kind"] == records.EPISODE]
        assert kept == fast[:len(kept)]  # the first ones while the bucket lasts, in order
        if len(kept) < len(fast):  # ... and the rest one aggregate
            assert len(out) == len(kept) + 1 and out[-1]["kind"] == records.EPISODES
            assert out[-1]["n"] == 200 - len(kept) and out[-1]["step_first"] == len(kept)
            aggregates += 1
        singles += len(kept)
    # single records: the bucket (five minutes' worth) and the rate, never more; past that one aggregate per flush
    assert singles <= EPISODES_PER_S * EPISODE_WINDOW_S + EPISODES_PER_S * 600
    assert aggregates >= 600 - (EPISODES_PER_S * EPISODE_WINDOW_S) / 200 - 1
    assert limiter.aggregated == 200 * 600 - singles


def test_a_first_flush_bigger_than_the_bucket_keeps_the_bucket_as_single_records():
    limiter = EpisodeLimiter(clock=lambda: 0.0)
    eps = [records.episode(i, 1.0, 2) for i in range(int(EPISODES_PER_S * EPISODE_WINDOW_S) + 50)]
    out = limiter.take(list(eps))
    assert out[:-1] == eps[:-50] and out[-1]["kind"] == records.EPISODES and out[-1]["n"] == 50
    assert limiter.take([records.episode(1, 1.0, 2)], now=0.0)[0]["kind"] == records.EPISODES  # bucket empty


def test_an_aggregate_holds_count_step_range_reward_spread_extremes_lengths_and_measure_means():
    eps = _episodes(7)
    del eps[3]["m"]  # an episode that did not report the measure: the mean is over those that did
    rec = records.episodes(eps)
    rewards = [e["reward"] for e in eps]
    assert records.well_formed(rec) and json.loads(json.dumps(rec)) == rec
    assert (rec["n"], rec["step_first"], rec["step"], rec["t"]) == (7, eps[0]["step"], eps[-1]["step"], eps[-1]["t"])
    assert rec["reward"] == pytest.approx(statistics.fmean(rewards))
    assert rec["reward_std"] == pytest.approx(statistics.pstdev(rewards))
    assert (rec["reward_min"], rec["reward_max"]) == (min(rewards), max(rewards))
    lengths = [e["length"] for e in eps]
    assert (rec["length"], rec["length_min"], rec["length_max"]) == (pytest.approx(statistics.fmean(lengths)),
                                                                     min(lengths), max(lengths))
    assert rec["m"]["co2_kg"] == pytest.approx(statistics.fmean(e["m"]["co2_kg"] for e in eps if "m" in e))
    assert not records.well_formed({**rec, "n": 0})
    assert not records.well_formed({k: v for k, v in rec.items() if k != "reward_max"})


@pytest.mark.parametrize("sizes", [[1], [40], [1, 3, 17, 1, 40], [600]])
def test_the_summary_is_the_same_from_single_records_and_from_aggregates_ending_at_the_window(sizes):
    eps = _episodes(1_300 + REWARD_WINDOW, seed=len(sizes))
    # the last REWARD_WINDOW episodes as their own records: the window starts at a record's edge
    recs = _aggregated(eps[:-REWARD_WINDOW], sizes) + eps[-REWARD_WINDOW:]
    single, agg = summarize_records(eps), summarize_records(recs)
    for key in ("timesteps", "episodes", "final_window", "final_mean_reward", "final_std_reward",
                "all_mean_reward", "all_std_reward"):
        assert agg[key] == pytest.approx(single[key]), key
    assert agg["final_measures"] == pytest.approx(single["final_measures"])
    assert agg["all_measures"] == pytest.approx(single["all_measures"])
    # the best rolling mean is looked at after each record (an aggregate's inside is not known): at most the best
    assert agg["best_mean_reward"] <= single["best_mean_reward"] + 1e-9
    best = max(rolling_means([e["reward"] for e in eps])[REWARD_WINDOW - 1:])
    assert single["best_mean_reward"] == pytest.approx(best)
    if sizes == [1]:
        assert agg["best_mean_reward"] == pytest.approx(best)


def test_a_window_that_starts_inside_an_aggregate_counts_its_part_at_the_aggregate_mean():
    eps = _episodes(1_050)
    recs = _aggregated(eps, [70])  # records of 70: the last 100 episodes are 30 of one and all 70 of the last
    groups = episode_groups(recs)
    last = last_window(groups)
    assert [(g.count, w) for g, w in last] == [(70, 30.0), (70, 70.0)]
    tail, part, cut = 70, 30, groups[-2]
    expected = (groups[-1].reward * tail + cut.reward * part) / REWARD_WINDOW
    assert weighted_mean(last) == pytest.approx(expected)
    exact = statistics.fmean(e["reward"] for e in eps[-REWARD_WINDOW:])
    # within the aggregation: the cut record's part is off by at most its spread
    assert abs(weighted_mean(last) - exact) <= part / REWARD_WINDOW * (cut.reward_max - cut.reward_min)
    assert summarize_records(recs)["episodes"] == 1_050


def test_readers_of_a_run_folder_agree_on_both_forms(runs_dir):
    """The runs list, the Results curve, the sweep objective and summary.json read the same run alike."""
    from core.config.validate import validate_config
    from core.results.curves import reward_curve
    from core.run.layout import RunDir
    from core.run.store import RunStore, run_info
    from core.sweep.study import objective_value
    from core.util.jsonl import JsonlWriter

    eps = _episodes(2_000, seed=5)
    folders = []
    for recs in (eps, _aggregated(eps[:-REWARD_WINDOW], [1, 25, 300]) + eps[-REWARD_WINDOW:]):
        run = RunStore(runs_dir).create(validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"}}).config)
        writer = JsonlWriter(RunDir(run).metrics)
        writer.write([records.attempt(1, 0), *recs, records.progress(10_000, 100.0, 10_000)])
        writer.close()
        folders.append(run)
    expected = statistics.fmean(e["reward"] for e in eps[-REWARD_WINDOW:])
    for run in folders:
        assert run_info(run).mean_reward == pytest.approx(expected)
        assert reward_curve(run).mean_reward[-1] == pytest.approx(expected)
        assert objective_value(run, "episode_mean_reward") == pytest.approx(expected)
        co2 = statistics.fmean(e["m"]["co2_kg"] for e in eps[-REWARD_WINDOW:])
        assert objective_value(run, "info.co2_kg") == pytest.approx(co2)
    single, agg = (reward_curve(run) for run in folders)
    assert len(agg.steps) < len(single.steps) / 2  # an aggregate is one point of the curve, at its last episode
    assert all(math.isfinite(v) for v in agg.mean_reward)
