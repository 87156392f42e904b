"""What a curve draws of a series: per segment, decimated to the plot's width, breaks as gaps.

A series is cut into segments where its run did not run (``SeriesBuffer.segments``). Each
segment keeps its own ``MinMaxLevels``, so a bucket never mixes points from both sides of a
gap; the drawn arrays hold a NaN between segments, which a curve with ``connect="finite"``
draws as a gap, not as a line across the time the run was stopped.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from app.plots.minmax_levels import MinMaxLevels


class SegmentLevels:
    """The ``MinMaxLevels`` of each segment of one series, kept in step with its buffer."""

    def __init__(self) -> None:
        self.generation = -1
        self.levels: list[MinMaxLevels] = []

    def update(self, generation: int, values: np.ndarray, segments: list[tuple[int, int]]) -> list[MinMaxLevels]:
        if generation != self.generation:
            self.generation, self.levels = generation, []
        while len(self.levels) < len(segments):
            self.levels.append(MinMaxLevels())
        del self.levels[len(segments):]
        for (a, b), levels in zip(segments, self.levels, strict=True):
            levels.update(values[a:b])
        return self.levels


def _pieces(segments: list[tuple[int, int]], start: int, stop: int) -> Iterator[tuple[int, int, int, int, int]]:
    """Each segment's part of ``start:stop``: (segment index, a, b, lo, hi)."""
    for i, (a, b) in enumerate(segments):
        lo, hi = max(a, start), min(b, stop)
        if hi > lo:
            yield i, a, b, lo, hi


def _share(buckets: int, lo: int, hi: int, start: int, stop: int) -> int:
    return max(1, round(buckets * (hi - lo) / max(1, stop - start)))


def segmented_line(levels: list[MinMaxLevels], x: np.ndarray, values: np.ndarray, segments: list[tuple[int, int]],
                   start: int, stop: int, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """The line of ``start:stop`` at ~``buckets`` min/max pairs, NaN between segments."""
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    for i, a, b, lo, hi in _pieces(segments, start, stop):
        px, py = levels[i].decimate(x[a:b], values[a:b], lo - a, hi - a, _share(buckets, lo, hi, start, stop))
        if xs:
            xs.append(px[:1])
            ys.append(np.array([np.nan]))
        xs.append(px)
        ys.append(py)
    if not xs:
        return np.empty(0), np.empty(0)
    return np.concatenate(xs), np.concatenate(ys)


def segmented_band(levels: list[MinMaxLevels], x: np.ndarray, values: np.ndarray, segments: list[tuple[int, int]],
                   start: int, stop: int, buckets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper edge of ``start:stop`` at ~``buckets`` columns, NaN between segments."""
    xs: list[np.ndarray] = []
    los: list[np.ndarray] = []
    his: list[np.ndarray] = []
    for i, a, b, lo, hi in _pieces(segments, start, stop):
        px, plo, phi = levels[i].band(x[a:b], values[a:b], lo - a, hi - a, _share(buckets, lo, hi, start, stop))
        if xs:
            xs.append(px[:1])
            los.append(np.array([np.nan]))
            his.append(np.array([np.nan]))
        xs.append(px)
        los.append(plo)
        his.append(phi)
    if not xs:
        return np.empty(0), np.empty(0), np.empty(0)
    return np.concatenate(xs), np.concatenate(los), np.concatenate(his)


def with_breaks(x: np.ndarray, y: np.ndarray, segments: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """All points of a short series, NaN between segments."""
    if len(segments) <= 1:
        return x, y
    starts = np.array([a for a, _ in segments[1:]])
    return np.insert(x, starts, x[starts]), np.insert(y.astype(float), starts, np.nan)


def lonely_points(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points a line cannot show: finite, with no finite neighbour on either side."""
    finite = np.isfinite(y)
    if len(y) != 1 and finite.all():  # a whole line (most frames): nothing to look for
        return x[:0], y[:0]
    before = np.concatenate(([False], finite[:-1]))
    after = np.concatenate((finite[1:], [False]))
    alone = finite & ~before & ~after
    return x[alone], y[alone]
