"""Curves across seeds: the seeds on a common grid, their mean or IQM, and the 95 % bootstrap band."""

from __future__ import annotations

import numpy as np
import pytest

from core.results.curves import RewardCurve
from core.results.group_curves import MAX_POINTS, bootstrap_band, common_grid, group_curve, group_curves
from core.run.status import write_status
from tests.results_helpers import make_result_run, rolling_means


def curve(run_id: str, steps, rewards, seconds=None) -> RewardCurve:
    steps = [float(s) for s in steps]
    return RewardCurve(run_id, run_id, None, steps, [float(s) for s in (seconds if seconds is not None else steps)],
                       [float(r) for r in rewards])


def test_seeds_of_different_lengths_and_spacings_meet_on_the_range_they_all_cover():
    a = curve("a", [0, 10, 20, 30, 40], [0, 1, 2, 3, 4])  # y = x / 10
    b = curve("b", [5, 20, 35, 50], [10, 40, 70, 100])  # y = 2 x
    c = curve("c", [2, 8, 14, 20, 26, 32, 38, 44], [x * x for x in (2, 8, 14, 20, 26, 32, 38, 44)])
    g = group_curve("k", "lr 1e-3", [a, b, c])
    # from the largest first step (b's 5) to the smallest last step (a's 40): every seed's own steps there
    assert g.x.tolist() == [5, 8, 10, 14, 20, 26, 30, 32, 35, 38, 40]
    assert g.seeds[0].tolist() == pytest.approx([x / 10 for x in g.x])
    assert g.seeds[1].tolist() == pytest.approx([2 * x for x in g.x])
    # c between its own points: linear, e.g. at 5 from (2, 4) to (8, 64), at 10 from (8, 64) to (14, 196)
    assert g.seeds[2][[0, 1, 2, 4]].tolist() == pytest.approx([34.0, 64.0, 64 + 2 / 6 * 132, 400.0])
    assert g.center.tolist() == pytest.approx(g.seeds.mean(axis=0).tolist())
    assert g.center[4] == pytest.approx((2 + 40 + 400) / 3)
    assert g.n == 3 and g.n_per_point.tolist() == [3] * 11 and g.legend == "lr 1e-3 (n=3)"
    assert g.cut_at == 40.0  # b and c went on past a's end
    assert (g.low <= g.center).all() and (g.center <= g.high).all()


def test_a_long_run_is_thinned_to_at_most_max_points_keeping_both_ends():
    long_x = np.arange(0, 100_000, 7, dtype=float)
    grid = common_grid([long_x, np.arange(3, 99_000, 11, dtype=float)])
    # from the second's first step to its last (3 + 11 x 8,999), both its own: the first seed covers them
    assert len(grid) == MAX_POINTS and grid[0] == 3 and grid[-1] == 98_992
    assert np.all(np.diff(grid) > 0)
    gaps = np.diff(grid)
    assert gaps.max() < 2.5 * gaps.mean()  # evenly spread, not bunched at one end


def test_one_seed_is_its_curve_with_no_band_and_a_run_without_episodes_is_left_out():
    g = group_curve("k", "alone", [curve("a", [10, 20, 30], [1, 5, 3]), curve("empty", [], [])])
    assert g.x.tolist() == [10, 20, 30] and g.center.tolist() == [1, 5, 3]
    assert g.low is None and g.high is None and g.n == 1 and g.skipped == ("empty",) and g.cut_at is None
    assert group_curve("k", "none yet", [curve("empty", [], [])]) is None


def test_the_band_holds_the_mean_and_narrows_as_seeds_agree_more_or_grow_in_number():
    rng = np.random.default_rng(7)
    trend = np.linspace(-200, 100, 300)

    def width(n: int, spread: float) -> float:
        seeds = [curve(f"s{i}", np.arange(300) * 10, trend + rng.normal(0, spread, 300)) for i in range(n)]
        g = group_curve("k", "g", seeds)
        assert (g.low <= g.center + 1e-9).all() and (g.center <= g.high + 1e-9).all()
        # a bootstrap of means never leaves the seeds' own range
        assert (g.low >= g.seeds.min(axis=0) - 1e-9).all() and (g.high <= g.seeds.max(axis=0) + 1e-9).all()
        return float(np.mean(g.high - g.low))

    loose, tight, many = width(5, 30.0), width(5, 3.0), width(20, 30.0)
    assert tight < loose / 5 and many < loose * 0.7


def test_the_band_is_a_95_percent_interval_of_the_mean_reproducible_from_its_seed():
    rng = np.random.default_rng(11)
    seeds = rng.normal(0.0, 1.0, size=(20, 400))  # 400 independent grid points, true mean 0
    low, high = bootstrap_band(seeds)
    coverage = float(np.mean((low <= 0) & (0 <= high)))
    assert 0.88 <= coverage <= 0.99
    # its width against the normal approximation computed here: 2 x 1.96 x the bootstrap's standard error
    n = seeds.shape[0]
    expected = 2 * 1.96 * seeds.std(axis=0, ddof=0) / np.sqrt(n)
    assert 0.9 < float(np.mean((high - low) / expected)) < 1.1
    again = bootstrap_band(seeds)
    assert np.array_equal(low, again[0]) and np.array_equal(high, again[1])  # a fixed seed: the same band


def test_the_iqm_ignores_one_diverged_seed_that_drags_the_mean():
    steps = [0, 100, 200, 300]
    seeds = [curve(f"s{i}", steps, [10 + i, 20 + i, 30 + i, 40 + i]) for i in range(7)]
    seeds.append(curve("diverged", steps, [-1000, -1000, -1000, -1000]))
    g = group_curve("k", "g", seeds, statistic="iqm")
    values = np.sort(g.seeds, axis=0)
    assert g.center.tolist() == pytest.approx(values[2:6].mean(axis=0).tolist())  # 8 seeds: the middle 4
    assert g.center[0] == pytest.approx(np.mean([11, 12, 13, 14]))
    mean = group_curve("k", "g", seeds, statistic="mean")
    assert mean.center[0] == pytest.approx((10 + 11 + 12 + 13 + 14 + 15 + 16 - 1000) / 8) and mean.center[0] < 0
    with pytest.raises(ValueError, match="statistic 'median': use one of mean, iqm"):
        group_curve("k", "g", seeds, statistic="median")


def test_run_folders_group_by_launch_group_or_config_and_aggregate_their_rolling_means(runs_dir):
    def run(name: str, rewards, lr: float, group: str | None, seed: int, steps_per_episode: int = 20):
        path = make_result_run(runs_dir, name, rewards, steps_per_episode=steps_per_episode,
                               settings={"a2c.learning_rate": lr, "runtime.seed": seed})
        if group:
            write_status(path, group={"id": group, "seed": seed, "size": 2, "name": f"{group} seeds"})
        return path

    a0 = run("a0", [1.0, 3.0, 5.0, 7.0], 1e-3, "ga", 0)
    a1 = run("a1", [2.0, 2.0, 2.0], 1e-3, "ga", 1, steps_per_episode=25)  # steps 25, 50, 75
    b0 = run("b0", [9.0, 9.0], 3e-4, None, 0)
    lone = run("lone", [4.0, 6.0], 1e-3, None, 5)
    by_group = group_curves([a0, a1, b0, lone], by="group")
    assert [(g.label, g.n) for g in by_group] == [("ga seeds", 2), ("b0", 1), ("lone", 1)]
    ga = by_group[0]
    assert ga.x.tolist() == [25, 40, 50, 60, 75]  # a0 from 20 to 80, a1 from 25 to 75
    a0_means = rolling_means([1.0, 3.0, 5.0, 7.0])
    expected_a0 = np.interp(ga.x, [20, 40, 60, 80], a0_means)
    assert ga.seeds[0].tolist() == pytest.approx(expected_a0.tolist())
    assert ga.center.tolist() == pytest.approx(((expected_a0 + 2.0) / 2).tolist())
    by_config = group_curves([a0, a1, b0, lone], by="config")
    assert [g.n for g in by_config] == [3, 1]  # a0, a1 and lone share every learned setting but the seed
    assert by_config[0].x.tolist() == [25, 40]  # lone ends at step 40
