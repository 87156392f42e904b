"""Growing numpy buffers for live series: appends are amortised O(1) (capacity doubles).

A point has a weight, 1 unless said: how many episodes it stands for in a weighted mean. An
aggregate record of many episodes (``core.run.episodes``) is three points, its mean weighted by
its count and its extremes weighted 0 (they draw the points and the band; the mean is right).

A series is cut into segments where the run did not run (``mark_break``: a stop and resume, a
crash): plots draw no line from one segment to the next.

A buffer given ``max_points`` (the machine's plots: 5 samples a second, 864,000 in 48 h) never
holds more: past it, all but the newest ``max_points // RAW_SHARE`` points are cut to the lowest
and the highest point of each of ``max_points // 4`` buckets (``envelope_indices``: real points,
so every spike stays). The whole series then keeps about the same points per second (a line is
decimated by index, so a sparse old part would get fewer pixel columns than its time span), at
screen resolution; a 48 h run's GPU plots take ~4 MB a series instead of ~32 MB.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Column = Sequence[float] | np.ndarray  # one column of points: steps, times, values or weights

RAW_SHARE = 16  # a bounded buffer keeps its newest max_points // RAW_SHARE points raw (2**17: 27 min at 5 Hz)


class SeriesBuffer:
    """Points of one series: timestep, wall time (unix s), value and weight, in arrival order."""

    def __init__(self, capacity: int = 1024, max_points: int | None = None):
        self._data = np.empty((4, capacity), dtype=np.float64)
        self.max_points = max_points  # None: every point is kept
        self.compactions = 0
        self.size = 0
        self.version = 0  # bumps on every change, so a redraw can skip an unchanged series
        self.generation = 0  # bumps on clear: what was derived from the old points is stale
        self.breaks: list[int] = []  # indices where a new segment starts (never 0)

    def _reserve(self, extra: int) -> None:
        need = self.size + extra
        cap = self._data.shape[1]
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        grown = np.empty((4, cap), dtype=np.float64)
        grown[:, : self.size] = self._data[:, : self.size]
        self._data = grown

    def append(self, step: float, t: float, value: float, weight: float = 1.0) -> None:
        self.extend([step], [t], [value], [weight])

    def extend(self, steps: Column, times: Column, values: Column, weights: Column | None = None) -> None:
        n = len(values)
        if not n:
            return
        if self.max_points is not None and self.size + n > self.max_points:
            self.compact(self.max_points // RAW_SHARE, self.max_points // 2)  # first: the room never passes max_points
        self._reserve(n)
        self._data[0, self.size: self.size + n] = steps
        self._data[1, self.size: self.size + n] = times
        self._data[2, self.size: self.size + n] = values
        self._data[3, self.size: self.size + n] = 1.0 if weights is None else weights
        self.size += n
        self.version += 1

    def compact(self, keep_raw: int, old_points: int) -> None:
        """Keep the newest ``keep_raw`` points and ~``old_points`` of the older ones, their envelope (see the
        module's docstring).

        The first point and the points each side of a break are kept, so a segment still ends and starts where it did.
        Bumps ``generation``: what was derived from the points is computed again.
        """
        cut = self.size - keep_raw
        if cut <= old_points:
            return
        edges = [0] + [i for b in self.breaks if b <= cut for i in (b - 1, b) if i < cut]  # the first point: where x starts
        picked = np.zeros(cut, dtype=bool)
        picked[envelope_indices(self.values[:cut], old_points)] = True
        picked[edges] = True
        old = np.flatnonzero(picked)
        m = len(old)
        kept = self._data[:, old]
        self._data[:, m: m + keep_raw] = self._data[:, cut: self.size]  # numpy copies overlapping ranges safely
        self._data[:, :m] = kept
        self.breaks = sorted({int(np.searchsorted(old, b)) if b <= cut else b - cut + m for b in self.breaks} - {0})
        self.size = m + keep_raw
        self.version += 1
        self.generation += 1
        self.compactions += 1

    def clear(self) -> None:
        self.size = 0
        self.breaks = []
        self.version += 1
        self.generation += 1

    def mark_break(self) -> None:
        """The next point starts a new segment (the run did not run in between)."""
        if self.size and (not self.breaks or self.breaks[-1] != self.size):
            self.breaks.append(self.size)
            self.version += 1

    def set_breaks(self, breaks: list[int]) -> None:
        """The segments of another series with the same indices (a series derived from it)."""
        if breaks != self.breaks:
            self.breaks = list(breaks)
            self.version += 1

    def segments(self) -> list[tuple[int, int]]:
        """``(start, stop)`` index ranges of the segments, in order."""
        edges = [0, *self.breaks, self.size]
        return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a]

    @property
    def steps(self) -> np.ndarray:
        return self._data[0, : self.size]

    @property
    def times(self) -> np.ndarray:
        return self._data[1, : self.size]

    @property
    def values(self) -> np.ndarray:
        return self._data[2, : self.size]

    @property
    def weights(self) -> np.ndarray:
        return self._data[3, : self.size]

    def x(self, mode: str) -> np.ndarray:
        """The x values for ``mode`` "step" or "time"."""
        return self.times if mode == "time" else self.steps


def rolling_mean(values: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last ``window`` values at each point (fewer at the start)."""
    if not len(values):
        return values
    cs = np.concatenate(([0.0], np.cumsum(values)))
    idx = np.arange(1, len(values) + 1)
    lo = np.maximum(idx - window, 0)
    return (cs[idx] - cs[lo]) / (idx - lo)


def rolling_mean_from(values: np.ndarray, start: int, window: int) -> np.ndarray:
    """``rolling_mean(values, window)[start:]``, reading only the values it needs.

    Costs O(len(values) - start + window), so a live curve appends its mean per batch instead
    of recomputing it over the whole history.
    """
    lo = max(0, start - window + 1)  # from here every point from `start` on sees its full window
    return rolling_mean(values[lo:], window)[start - lo:]


def weighted_rolling_mean_from(values: np.ndarray, weights: np.ndarray, start: int, window: int) -> np.ndarray:
    """The mean of the last ``window`` episodes at each point from ``start`` on, a point counting as
    ``weights`` episodes (the oldest point in the window in part); a point of weight 0 repeats the
    mean before it. Reads at most ``3 * window`` points before ``start``: a record is at most three
    points, which together weigh at least one episode."""
    lo = max(0, start - 3 * window)
    v, w = values[lo:], weights[lo:]
    cw = np.concatenate(([0.0], np.cumsum(w)))
    cs = np.concatenate(([0.0], np.cumsum(np.where(w > 0, v * w, 0.0))))
    hi = cw[1:]
    low = np.maximum(hi - window, 0.0)
    total = hi - low
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (cs[1:] - np.interp(low, cw, cs)) / total
    mean = np.where(total > 0, mean, v)  # nothing weighed yet: the point itself
    return mean[start - lo:]


def envelope_indices(y: np.ndarray, max_points: int) -> np.ndarray:
    """Indices of at most ~``max_points`` points of ``y`` that keep its shape.

    ``y`` is cut into equal buckets; each keeps its lowest and its highest point (in index
    order), so the min/max envelope survives. The last point is always kept: the newest episode
    shows as soon as it arrives. Fewer than ``max_points`` points are all kept.
    """
    n = len(y)
    if n <= max_points:
        return np.arange(n)
    size = -(-2 * n // max_points)  # two points per bucket
    m = n // size
    body = y[: m * size].reshape(m, size)
    # NaN (an episode without a reward) must not win a bucket: treat it as neither min nor max
    filled_lo = np.where(np.isnan(body), np.inf, body)
    filled_hi = np.where(np.isnan(body), -np.inf, body)
    base = np.arange(m) * size
    lo = base + filled_lo.argmin(axis=1)
    hi = base + filled_hi.argmax(axis=1)
    tail = np.arange(m * size, n)  # the partial last bucket, the newest points: all of them
    idx = np.concatenate((lo, hi, tail, [n - 1]))
    idx.sort()
    keep = np.ones(len(idx), dtype=bool)
    keep[1:] = idx[1:] != idx[:-1]
    return idx[keep]
