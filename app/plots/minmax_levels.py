"""Min/max levels of a growing series, so a long line is drawn from ~2 points per pixel column.

pyqtgraph's own peak downsampling scans the whole series on every ``setData`` (216,000 samples
per GPU curve after 12 h, several of them 20 times a second). ``MinMaxLevels`` keeps the min and
the max of each bucket of 4, 8, 16, ... samples, extended with the new samples only, and
``decimate`` cuts a drawable line from the coarsest level that still gives about one bucket per
pixel column: the cost of a redraw follows the plot's width, not the run's length.

Like pyqtgraph's "peak" method, each bucket is drawn as its min and max at the bucket's first x
(a vertical stroke within one pixel column); the samples after the last whole bucket, the newest,
are drawn as they are. ``band`` gives the same buckets as a lower and an upper edge, for a
filled band (the episode rewards of a long run).
"""

from __future__ import annotations

import numpy as np

FIRST = 4  # samples per bucket of the finest level; each next level doubles it
MIN_BUCKETS = 64  # no level coarser than this many buckets is kept (never fewer than a plot's pixels)


class _Level:
    """Bucket minima and maxima of one level, in a buffer that doubles as it grows."""

    def __init__(self, size: int):
        self.size = size  # samples per bucket
        self._data = np.empty((2, 256), dtype=np.float64)
        self.count = 0

    @property
    def lo(self) -> np.ndarray:
        return self._data[0, : self.count]

    @property
    def hi(self) -> np.ndarray:
        return self._data[1, : self.count]

    def extend(self, lo: np.ndarray, hi: np.ndarray) -> None:
        need = self.count + len(lo)
        if need > self._data.shape[1]:
            grown = np.empty((2, max(need, 2 * self._data.shape[1])), dtype=np.float64)
            grown[:, : self.count] = self._data[:, : self.count]
            self._data = grown
        self._data[0, self.count: need] = lo
        self._data[1, self.count: need] = hi
        self.count = need


class MinMaxLevels:
    """The levels of one series; call ``update`` with the whole series before ``decimate``."""

    def __init__(self) -> None:
        self._levels: list[_Level] = []
        self._seen = 0  # samples of the series the finest level has consumed

    def clear(self) -> None:
        self._levels.clear()
        self._seen = 0

    def update(self, values: np.ndarray) -> None:
        """Extend the levels with ``values[seen:]``; a shorter series than before starts over."""
        n = len(values)
        if n < self._seen:
            self.clear()
        self._seen = n
        src_lo = src_hi = values
        src_count, factor, size = n, FIRST, FIRST
        k = 0
        while src_count // factor >= MIN_BUCKETS:
            if k == len(self._levels):
                self._levels.append(_Level(size))
            level = self._levels[k]
            done, whole = level.count, src_count // factor
            if whole > done:
                lo = src_lo[done * factor: whole * factor].reshape(-1, factor)
                hi = src_hi[done * factor: whole * factor].reshape(-1, factor)
                # fmin/fmax skip NaN (a bucket is NaN only when all of it is)
                level.extend(np.fmin.reduce(lo, axis=1), np.fmax.reduce(hi, axis=1))
            src_lo, src_hi, src_count = level.lo, level.hi, level.count
            factor, size, k = 2, size * 2, k + 1

    def _buckets(self, start: int, stop: int, buckets: int) -> tuple[_Level, int, int] | None:
        """The level and its whole buckets ``b0:b1`` for ``start:stop`` (None: draw the samples as they are)."""
        count = stop - start
        if count <= 2 * buckets or not self._levels:
            return None
        # the finest level with at most `buckets` buckets in range, else the coarsest there is
        level = next((lv for lv in self._levels if count // lv.size <= buckets), self._levels[-1])
        b0, b1 = start // level.size, min(level.count, stop // level.size)  # whole buckets that start in range
        return (level, b0, b1) if b1 > b0 else None

    def band(self, x: np.ndarray, values: np.ndarray, start: int, stop: int,
             buckets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``x``, lower and upper edge of the values in ``start:stop`` at ~``buckets`` columns.

        Each bucket's min and max at its first x, then the samples after the last whole bucket as
        one more bucket, drawn to the newest sample's x (a band of single samples there would
        narrow to a line: a gap in the band where the data has none); a short range is the
        samples themselves.
        """
        found = self._buckets(start, stop, buckets)
        if found is None:
            return x[start:stop], values[start:stop], values[start:stop]
        level, b0, b1 = found
        bx, lo, hi = x[np.arange(b0, b1) * level.size], level.lo[b0:b1], level.hi[b0:b1]
        tail = b1 * level.size
        if tail < stop:
            rest = values[tail:stop]
            t_lo, t_hi = (np.nanmin(rest), np.nanmax(rest)) if np.isfinite(rest).any() else (np.nan, np.nan)
            ends = np.unique(x[[tail, stop - 1]])
            bx = np.concatenate((bx, ends))
            lo = np.concatenate((lo, np.full(len(ends), t_lo)))
            hi = np.concatenate((hi, np.full(len(ends), t_hi)))
        else:  # the last whole bucket reaches the newest sample: draw it to there
            bx, lo, hi = np.append(bx, x[stop - 1]), np.append(lo, lo[-1]), np.append(hi, hi[-1])
        return bx, lo, hi

    def decimate(self, x: np.ndarray, values: np.ndarray, start: int, stop: int,
                 buckets: int) -> tuple[np.ndarray, np.ndarray]:
        """``x[start:stop]``, ``values[start:stop]`` as at most ~``buckets`` min/max pairs.

        A range that is short enough comes back as it is. The drawn points can reach up to one
        bucket before ``start`` (never past ``stop``), so a zoomed view has no gap at its left
        edge; the last one is always ``stop - 1`` itself.
        """
        found = self._buckets(start, stop, buckets)
        if found is None:
            return x[start:stop], values[start:stop]
        level, b0, b1 = found
        s = level.size
        m = b1 - b0
        out_x = np.empty(2 * m)
        out_x[0::2] = out_x[1::2] = x[np.arange(b0, b1) * s]
        out_y = np.empty(2 * m)
        out_y[0::2] = level.lo[b0:b1]
        out_y[1::2] = level.hi[b0:b1]
        # then the samples after those buckets as they are (the newest, while following), and
        # at least the last one, so the line ends exactly where the data does
        tail = min(b1 * s, stop - 1)
        return np.concatenate((out_x, x[tail:stop])), np.concatenate((out_y, values[tail:stop]))
