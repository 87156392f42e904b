"""One live series of a ``LivePlot``: its buffer, its graphics items, and how they are drawn.

A line is cut to ~2 points per pixel column of what is in view from its min/max levels, with a
dot for each point that has no neighbour to join and the readings past the warning level drawn
over in the alert colour. Points (one per episode) are drawn while at most ``MAX_SYMBOLS`` are
in view; past that, a series with a band shows the min/max band of them instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPen

from app.plots.band_item import BandItem
from app.plots.buffers import SeriesBuffer, envelope_indices
from app.plots.drawing import SegmentLevels, lonely_points, segmented_band, segmented_line, with_breaks
from app.theme import ALERT_COLOR

# what a series' curves were last given: buffer generation, version, x mode, start, stop, buckets, warning level
Drawing = tuple[int, int, str, int, int, int, float | None]
View = tuple[float, float, float]  # the x range in view and its width in pixels
Basis = tuple[View, tuple[int, ...]]  # the view and the breaks a line was cut for

MAX_SYMBOLS = 1000  # a scatter item costs ~3 µs of Python per point on every setData


@dataclass
class Series:
    buf: SeriesBuffer
    curve: pg.PlotDataItem
    points: bool  # drawn as symbols (one per episode), else as a line
    keep: bool  # part of the plot itself; dynamic series go when the plot is reset for another run
    pen: QPen | None = None
    levels: SegmentLevels | None = None
    band: BandItem | None = None
    dots: pg.PlotDataItem | None = None  # the points a line cannot show
    alert: pg.PlotDataItem | None = None  # readings past the warning level
    # the values' lowest and highest, kept up to date with the new points only:
    # (buffer generation, points seen, low, high); the whole history scanned each frame cost ~1 ms a 12 h plot
    _extent: tuple[int, int, float, float] = (-1, 0, math.inf, -math.inf)
    _empty: set[str] = field(default_factory=set)  # of "dots", "alert": items last given no data
    # what the curves were last given: (buffer generation, version, x mode, start, stop, buckets, warning level);
    # the same again (a redraw asked for by a zoom back, a smoothing or log change, a frame with other news) is no setData
    drawn: Drawing | None = None
    # a line's last drawing: its points, and the view and the breaks it was cut for (see news_hidden)
    line: tuple[np.ndarray, np.ndarray] | None = None
    basis: Basis | None = None

    def graphics(self) -> list[pg.GraphicsObject]:
        """The items this series put on the plot."""
        return [g for g in (self.curve, self.dots, self.alert, self.band) if g is not None]

    def extent(self) -> tuple[float, float] | None:
        """The lowest and highest value of the series (None: no finite value)."""
        buf = self.buf
        generation, seen, low, high = self._extent
        if generation != buf.generation or seen > buf.size:
            seen, low, high = 0, math.inf, -math.inf
        if buf.size > seen:
            new = buf.values[seen:]
            if not np.isnan(new).all():
                low, high = min(low, float(np.nanmin(new))), max(high, float(np.nanmax(new)))
            self._extent = (buf.generation, buf.size, low, high)
        return (low, high) if low <= high else None

    def _set_extra(self, name: str, item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray) -> None:
        """``setData`` of the dots or the alert curve, skipped while they stay empty (most frames):
        an empty ``setData`` still costs ~0.3 ms of pyqtgraph's bookkeeping."""
        if not len(x):
            if name in self._empty:
                return
            self._empty.add(name)
        else:
            self._empty.discard(name)
        item.setData(x, y)

    def clear(self) -> None:
        self.buf.clear()
        self._empty = {"dots", "alert"}
        self.drawn = self.line = self.basis = None
        for curve in (self.curve, self.dots, self.alert):
            if curve is not None:
                curve.setData([], [])
        if self.band is not None:
            self.band.set_band([], [], [])

    def draw_line(self, item: pg.PlotItem, x: np.ndarray, start: int, stop: int, buckets: int,
                  warn_level: float | None) -> np.ndarray:
        """Draw ``x[start:stop]`` of the line at ~2 points per bucket; returns the y drawn."""
        buf, values, segments = self.buf, self.buf.values, self.buf.segments()
        assert self.levels is not None
        if stop - start <= 2 * buckets:
            lx, ly = with_breaks(x[start:stop], values[start:stop], [(max(a, start) - start, min(b, stop) - start)
                                                                     for a, b in segments if min(b, stop) > max(a, start)])
        else:
            levels = self.levels.update(buf.generation, values, segments)
            lx, ly = segmented_line(levels, x, values, segments, start, stop, buckets)
        self.curve.setData(lx, ly)
        self.line = (lx, ly)
        if self.dots is not None:
            self._set_extra("dots", self.dots, *lonely_points(lx, ly))
        self._draw_alert(item, lx, ly, warn_level)
        return ly

    def news_hidden(self, drawing: Drawing, x: np.ndarray, view: View) -> bool:
        """The samples since this line was last drawn would change no pixel of it: all of them fall in the pixel
        column of its last point and within the values drawn there (a 24 h run's x axis gives a column ~90 s; a
        GPU sample comes every 0.2 s). Such a frame gives the curve nothing and repaints nothing.

        ``drawing`` is what ``drawn`` would become, ``view`` the x range in view and its width in pixels.
        """
        old, line = self.drawn, self.line
        if old is None or line is None or self.basis != (view, tuple(self.buf.breaks)):
            return False
        generation, _, mode, start, stop, buckets, warn = drawing
        if (old[0], old[2], old[3], old[5], old[6]) != (generation, mode, start, buckets, warn) or stop < old[4]:
            return False
        new_x, new_y = x[old[4]:stop], self.buf.values[old[4]:stop]
        if not len(new_x):
            return True  # the points in range are the ones drawn
        lx, ly = line
        low, high, width = view
        if not len(lx) or width <= 0 or high <= low or not np.isfinite(new_y).all():
            return False
        pixel = (high - low) / width
        last = float(lx[-1])
        column = low + math.floor((last - low) / pixel) * pixel
        if not math.isfinite(column) or float(new_x[-1]) >= column + pixel:
            return False
        tail_x, tail_y = lx[-4096:], ly[-4096:]
        with np.errstate(invalid="ignore"):
            there = tail_y[(tail_x >= column) & np.isfinite(tail_y)]
        return bool(len(there)) and float(there.min()) <= float(new_y.min()) and float(new_y.max()) <= float(there.max())

    def _draw_alert(self, item: pg.PlotItem, x: np.ndarray, y: np.ndarray, level: float | None) -> None:
        if level is None or not len(y) or not np.nanmax(y, initial=-np.inf) >= level:
            if self.alert is not None:
                self._set_extra("alert", self.alert, x[:0], y[:0])
            return
        if self.alert is None:
            self.alert = pg.PlotDataItem(pen=pg.mkPen(ALERT_COLOR, width=2), connect="finite", symbol="o",
                                         symbolSize=4, symbolPen=None, symbolBrush=pg.mkBrush(ALERT_COLOR))
            item.addItem(self.alert, ignoreBounds=True)  # a part of the line: within its bounds
        with np.errstate(invalid="ignore"):
            self._set_extra("alert", self.alert, x, np.where(y >= level, y, np.nan))

    def draw_points(self, x: np.ndarray, start: int, stop: int, buckets: int) -> None:
        """Every point in view while few enough to draw; past that the band of them (and no points)."""
        buf, y = self.buf, self.buf.values
        if self.band is None or stop - start <= MAX_SYMBOLS:
            px, py = x[start:stop], y[start:stop]
            if self.band is None and len(px) > MAX_SYMBOLS:  # no band to show them: their envelope
                idx = envelope_indices(py, MAX_SYMBOLS)
                px, py = px[idx], py[idx]
            if stop < len(x):  # keep the newest point, so the data's bounds stay whole
                px, py = np.concatenate((px, x[-1:])), np.concatenate((py, y[-1:]))
            self.curve.setData(px, py)
            if self.band is not None:
                self.band.set_band([], [], [])
            return
        assert self.levels is not None
        segments = buf.segments()
        levels = self.levels.update(buf.generation, y, segments)
        bx, lo, hi = segmented_band(levels, x, y, segments, start, stop, buckets)
        self.curve.setData([], [])
        self.band.set_band(bx, lo, hi)
