"""A live plot's series, by key: each a ``Series`` (``app.plots.series_items``: its buffer, curve, dots, band and
alert items), the derived ones (a rolling mean, a smoothed copy) kept up to date from their source's new points
only, and TensorBoard's smoothing (``set_smoothing``).

``SeriesRegistry`` is a part of ``LivePlot`` (a mixin: the plot's own items and legend hold the series' graphics),
split from it by what it holds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from app.plots.band_item import BandItem
from app.plots.buffers import SeriesBuffer
from app.plots.crosshair import Crosshair
from app.plots.drawing import SegmentLevels
from app.plots.series_items import Series
from app.plots.smoothing import Ema

SMOOTH = "~smooth"  # key suffix of a series' smoothed copy
Stamp = tuple[int, str, float | None]  # what a series was last drawn from: its buffer's version, x mode, warning level


class SeriesRegistry:
    """The plot's series and their derived copies; ``_drawn`` forgets what a change makes stale."""

    _series: dict[str, Series]
    # key -> (source key, fn(values, start) -> derived values[start:]); a derived series has
    # its own buffer, extended by the source's new points only.
    _derived: dict[str, tuple[str, Callable[..., np.ndarray]]]
    _drawn: dict[str, Stamp]
    legend: pg.LegendItem
    crosshair: Crosshair
    smoothing: float
    getPlotItem: Callable[[], pg.PlotItem]  # noqa: N815 (pyqtgraph's name)
    _show_x_values: Callable[[bool], None]

    # --- series ----------------------------------------------------------------------------

    def add_series(self, key: str, name: str, color: str, symbol: str | None = None, width: float = 1.0,
                   line: bool = True, symbol_size: float = 4, keep: bool = True, band: bool = False) -> SeriesBuffer:
        """A new series drawn as a line, or as symbols (``line=False``); returns its buffer.

        ``band``: past ``MAX_SYMBOLS`` points in view, the symbols give way to a min/max band.
        ``keep=False``: the series belongs to the data shown (a GPU, a logged scalar) and goes on
        ``reset()``. Keep ``width`` 1 for series that grow long: Qt's raster engine draws wider
        pens through its stroker, ~4x slower per segment.
        """
        pen = pg.mkPen(color, width=width) if line else None
        kwargs = {}
        if symbol:
            kwargs = {"symbol": symbol, "symbolSize": symbol_size, "symbolPen": None,
                      "symbolBrush": pg.mkBrush(pg.mkColor(color).lighter(110))}
        item = self.getPlotItem()
        # refresh() decimates every series itself (pyqtgraph's downsampling would scan all of it
        # on every setData, and drop the last partial bucket: the newest episodes)
        curve = item.plot(name=name, pen=pen, connect="finite", **kwargs)
        series = Series(SeriesBuffer(), curve, points=not line, keep=keep, pen=pen)
        if line or band:
            series.levels = SegmentLevels()
        if line:
            # the line's own points: they add nothing to its bounds, and autoscale asks every item for them each frame
            series.dots = pg.PlotDataItem(pen=None, symbol="o", symbolSize=5, symbolPen=None, symbolBrush=pg.mkBrush(color))
            item.addItem(series.dots, ignoreBounds=True)
        if band:
            fill = QColor(color)
            fill.setAlpha(90)
            series.band = BandItem(fill)
            item.addItem(series.band)
            self.legend.addItem(pg.PlotDataItem(pen=None, fillLevel=0, fillBrush=pg.mkBrush(fill)), f"{name}s, min-max")
        self._series[key] = series
        return series.buf

    def add_derived(self, key: str, source: str, fn: Callable[..., np.ndarray], name: str, color: str, width: float = 2.0,
                    keep: bool = True) -> None:
        """A curve computed from another series (e.g. a rolling mean), kept up to date per batch.

        ``fn(values, start)`` returns the derived values for ``values[start:]`` (it may read
        earlier values); only new points are computed, never the whole history again. A ``fn`` whose
        ``weighted`` is true is called ``fn(values, start, weights)`` (the points' episode counts).
        """
        self.add_series(key, name, color, width=width, keep=keep)
        self._derived[key] = (source, fn)

    def remove_series(self, key: str) -> None:
        series = self._series.pop(key)
        item = self.getPlotItem()
        for gone in series.graphics():
            item.removeItem(gone)
        if series.band is not None:
            self.legend.removeItem(f"{series.curve.name()}s, min-max")
        self._derived.pop(key, None)
        self._drawn.pop(key, None)
        for derived in [k for k, (src, _) in self._derived.items() if src == key]:
            self.remove_series(derived)

    def has_series(self, key: str) -> bool:
        return key in self._series

    def buffer(self, key: str) -> SeriesBuffer:
        return self._series[key].buf

    def curve(self, key: str) -> pg.PlotDataItem:
        return self._series[key].curve

    def band_data(self, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The columns of ``key``'s min/max band (x, low, high), or None for a series without one."""
        band = self._series[key].band
        return band.getData() if band is not None else None

    def dots(self, key: str) -> pg.PlotDataItem | None:
        return self._series[key].dots

    def alert_curve(self, key: str) -> pg.PlotDataItem | None:
        return self._series[key].alert

    def series_keys(self) -> list[str]:
        return list(self._series)

    def legend_names(self) -> list[str]:
        return [label.text for _, label in self.legend.items]

    def point_count(self) -> int:
        """Points held by the plot's own (non-derived) series."""
        return sum(s.buf.size for k, s in self._series.items() if k not in self._derived)

    def clear_data(self) -> None:
        for series in self._series.values():
            series.clear()
        self._drawn.clear()
        self.crosshair.hide()

    def reset(self) -> None:
        """Another run: the series that came with the data go (and their legend rows), the rest is emptied."""
        for key in [k for k, s in self._series.items() if not s.keep]:
            if key in self._series:
                self.remove_series(key)
        self.clear_data()
        self._show_x_values(False)

    def mark_break(self) -> None:
        """The run did not run from here: the next points of every series start a new segment."""
        for key, series in self._series.items():
            if key not in self._derived:
                series.buf.mark_break()

    def _update_derived(self) -> None:
        for key, (source, fn) in self._derived.items():
            src, out = self._series[source].buf, self._series[key].buf
            if out.size > src.size:  # the source was cleared (and maybe refilled) since
                out.clear()
            start = out.size
            if src.size > start:
                values = fn(src.values, start, src.weights) if getattr(fn, "weighted", False) else fn(src.values, start)
                out.extend(src.steps[start:], src.times[start:], values)
            out.set_breaks(src.breaks)

    # --- smoothing ----------------------------------------------------------------------------

    def set_smoothing(self, weight: float, keys: list[str] | None = None) -> None:
        """Draw TensorBoard's EMA of ``keys`` (default: every line series) over their faded raw
        curves; 0 shows the raw curves alone."""
        self.smoothing = weight
        sources = keys if keys is not None else [k for k, s in self._series.items()
                                                 if not s.points and k not in self._derived]
        for key in sources:
            smooth, raw = key + SMOOTH, self._series[key]
            if weight <= 0:
                if smooth in self._series:
                    self.remove_series(smooth)
                if raw.pen is not None:
                    raw.curve.setPen(raw.pen)
                continue
            color = raw.pen.color() if raw.pen is not None else QColor(raw.curve.opts["symbolBrush"].color())
            if smooth in self._series:
                self.remove_series(smooth)  # a new weight: computed again, named again in the legend
            self.add_derived(smooth, key, Ema(weight), f"{raw.curve.name()} smoothed {weight:g}",
                             color.darker(115).name() if raw.points else color.name(), width=1.5, keep=raw.keep)
            if raw.pen is not None:
                faded = QColor(color)
                faded.setAlpha(70)
                raw.curve.setPen(pg.mkPen(faded, width=1))
        self._drawn.clear()

