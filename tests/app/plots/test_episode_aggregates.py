"""A fast env's aggregate records on the reward plot: three points each (mean, lowest, highest), the band
reaching both extremes, and the rolling mean weighing each aggregate by its episodes (the summary's figure)."""

from __future__ import annotations

import random

import numpy as np

from app.plots.buffers import rolling_mean, weighted_rolling_mean_from
from core.run import records
from core.run.episodes import episode_groups, window_means
from core.run.summary import summarize_records
from tests.app.plots.test_plots import make_panel


def _night(n_single: int, n_agg: int, size: int, seed: int = 3) -> tuple[list[dict], list[dict]]:
    """Episode records, and the same episodes with all but the first ``n_single`` in aggregates of ``size``."""
    rng = random.Random(seed)
    eps = [records.episode(2 * (i + 1), rng.uniform(-5, 5), 2, t=1e9 + i / 100) for i in range(n_single + n_agg * size)]
    aggs = [records.episodes(eps[n_single + k * size: n_single + (k + 1) * size]) for k in range(n_agg)]
    return eps, eps[:n_single] + aggs


def test_weighted_rolling_mean_is_the_plain_one_for_single_episodes_and_reads_from_a_start():
    values = np.random.default_rng(1).normal(size=500)
    ones = np.ones_like(values)
    whole = weighted_rolling_mean_from(values, ones, 0, 100)
    assert np.allclose(whole, rolling_mean(values, 100))
    assert np.allclose(weighted_rolling_mean_from(values, ones, 377, 100), whole[377:])
    # a point of weight 0 repeats the mean before it; one of weight 200 fills the window alone
    w = ones.copy()
    w[10], w[11] = 0.0, 200.0
    out = weighted_rolling_mean_from(values, w, 0, 100)
    assert out[10] == out[9] and np.isclose(out[11], values[11])


def test_aggregates_draw_their_extremes_and_the_mean_weighs_their_episodes(qtbot):
    panel = make_panel(qtbot)
    eps, mixed = _night(n_single=150, n_agg=60, size=37)
    panel.add_records(mixed)
    plot = panel.reward_plot
    qtbot.waitUntil(lambda: plot.buffer("episode").size == 150 + 3 * 60, timeout=5000)
    buf = plot.buffer("episode")
    aggs = mixed[150:]
    # each aggregate: its mean (weighing its count), then its lowest and highest reward (weighing nothing)
    assert np.allclose(buf.values[150:].reshape(60, 3), [[a["reward"], a["reward_min"], a["reward_max"]] for a in aggs])
    assert np.allclose(buf.weights[150:].reshape(60, 3), [[37, 0, 0]] * 60) and np.all(buf.weights[:150] == 1)
    lows, highs = buf.values.min(), buf.values.max()
    assert lows == min(e["reward"] for e in eps) and highs == max(e["reward"] for e in eps)
    # the rolling mean at the newest point is the summary's final reward; at each aggregate's mean point it is
    # the rolling mean of the episodes up to it, within the aggregation (the window's oldest aggregate in part)
    qtbot.waitUntil(lambda: plot.buffer("mean").size == buf.size, timeout=5000)
    mean = plot.buffer("mean").values
    assert np.isclose(mean[-1], summarize_records(mixed)["final_mean_reward"])
    plain = rolling_mean(np.array([e["reward"] for e in eps]), 100)
    assert np.allclose(mean[:150], plain[:150])  # single episodes: unchanged
    # at each aggregate's mean point: the readers' rolling mean (core.run.episodes), the same weighting
    readers = np.array([m for m, _ in window_means(episode_groups(mixed))])
    assert np.allclose(mean[:150], readers[:150]) and np.allclose(mean[150::3], readers[150:])
    ends = 150 + 37 * np.arange(1, 61) - 1  # and within the aggregation of the per-episode mean
    assert np.abs(mean[150::3] - plain[ends]).max() < 1.0
    assert np.allclose(mean[151::3], mean[150::3]) and np.allclose(mean[152::3], mean[150::3])  # extremes weigh 0
