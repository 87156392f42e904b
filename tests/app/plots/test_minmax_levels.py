"""The min/max levels a long line is drawn from: same envelope as the data, built incrementally."""

import numpy as np
import pytest

from app.plots.minmax_levels import MinMaxLevels


def series(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n).cumsum()
    y[n // 3] = 1e6  # one spike must survive decimation
    y[n // 2: n // 2 + max(1, n // 500)] = np.nan  # a gap (NaN) wins no bucket
    return np.arange(n, dtype=float) * 0.2 + 1000.0, y


@pytest.mark.parametrize("n", [10, 400, 4_000, 216_001])
def test_the_whole_series_keeps_its_bounds_and_its_newest_point(n):
    x, y = series(n)
    levels = MinMaxLevels()
    levels.update(y)
    dx, dy = levels.decimate(x, y, 0, n, buckets=800)
    assert len(dx) <= 2 * 800 + 2 * 800  # pairs of a level with <= 800 buckets, plus a tail under two buckets
    assert dx[0] == x[0] and dx[-1] == x[-1] and dy[-1] == y[-1]
    assert np.nanmax(dy) == np.nanmax(y) and np.nanmin(dy) == np.nanmin(y)
    assert np.all(np.diff(dx) >= 0)
    if n <= 1600:
        assert np.array_equal(dx, x) and np.array_equal(dy, y, equal_nan=True)


def test_levels_built_batch_by_batch_equal_levels_built_at_once():
    x, y = series(50_000)
    once, grown = MinMaxLevels(), MinMaxLevels()
    once.update(y)
    rng = np.random.default_rng(4)
    end = 0
    while end < len(y):
        end = min(len(y), end + int(rng.integers(1, 3000)))
        grown.update(y[:end])
    a, b = once.decimate(x, y, 0, len(y), 500), grown.decimate(x, y, 0, len(y), 500)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1], equal_nan=True)


def test_a_zoomed_range_is_decimated_from_its_own_points():
    x, y = series(216_000)
    levels = MinMaxLevels()
    levels.update(y)
    start, stop = 100_000, 140_000
    dx, dy = levels.decimate(x, y, start, stop, buckets=500)
    assert len(dx) <= 4 * 500
    # starts at most one bucket before `start`, never draws past `stop`
    assert x[start - 128] <= dx[0] <= x[start] and dx[-1] == x[stop - 1]
    assert np.nanmax(dy) >= np.nanmax(y[start:stop]) and np.nanmin(dy) <= np.nanmin(y[start:stop])


def test_a_series_that_shrank_starts_over():
    x, y = series(20_000)
    levels = MinMaxLevels()
    levels.update(y)
    fresh = np.linspace(-5, 5, 8_000)
    levels.update(fresh)
    _, dy = levels.decimate(x[:8_000], fresh, 0, 8_000, 200)
    assert dy.min() == -5 and dy.max() == 5
