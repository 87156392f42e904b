"""A pyqtgraph plot for live series: curves created once, redrawn from buffers on demand.

Data arrives into ``SeriesBuffer``s at any rate; ``refresh()`` (called from the monitor's
~50 ms timer) pushes only the series that changed into their curves with ``setData``. Lines are
cut from incrementally kept min/max levels (``MinMaxLevels``) to ~2 points per pixel column of
what is in view, so a 12 h run draws as fast as a 12 s one; series drawn as symbols (one per
episode) are decimated to at most ``MAX_SYMBOLS`` points of their visible range, keeping each
bucket's min and max and always the newest point.
"""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem, QLabel

from app.plots.buffers import SeriesBuffer, envelope_indices
from app.plots.headroom import Headroom
from app.plots.minmax_levels import MinMaxLevels
from app.plots.plot_message import PlotMessage

X_LABELS = {"step": "timesteps", "time": "wall time"}
MAX_SYMBOLS = 1000  # a scatter item costs ~3 µs of Python per point on every setData


def format_value(v: float) -> str:
    if not math.isfinite(v):
        return "-"
    a = abs(v)
    if a != 0 and (a >= 1e5 or a < 1e-3):
        return f"{v:.3g}"
    return f"{v:.4g}"


class LivePlot(pg.PlotWidget):
    """One plot of live series with a crosshair readout and an overlay message.

    ``time_only`` plots (GPU telemetry, which has no timestep) always use wall time on x.
    """

    def __init__(self, title: str, y_label: str, units: str | None = None, time_only: bool = False, parent=None):
        super().__init__(parent=parent)
        self.time_only = time_only
        self.x_mode = "time" if time_only else "step"
        self.paused = False
        self._series: dict[str, tuple[SeriesBuffer, pg.PlotDataItem]] = {}
        self._drawn: dict[str, tuple[int, str]] = {}
        # key -> (source key, fn(values, start) -> derived values[start:]); a derived series has
        # its own buffer, extended by the source's new points only.
        self._derived: dict[str, tuple[str, object]] = {}
        self._decimated: set[str] = set()  # symbol series drawn through envelope_indices
        self._levels: dict[str, tuple[int, MinMaxLevels]] = {}  # line series: (buffer generation, levels)
        item = self.getPlotItem()
        item.setTitle(title, size="9pt")
        item.setLabel("left", y_label, units=units)
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setMenuEnabled(True)
        self.legend = item.addLegend(offset=(8, 8), labelTextSize="8pt")
        self._apply_x_axis()
        self.setMinimumHeight(140)
        # Re-decimate for what a zoom, a pan, a resize or autoscale on/off shows (the next tick does it).
        item.vb.sigXRangeChanged.connect(self._on_x_range_changed)
        item.vb.sigResized.connect(self._redecimate)
        self._auto_x = True
        item.vb.sigStateChanged.connect(self._on_view_state_changed)

        self._headroom = Headroom()  # while autoscaling, x moves in steps rather than every frame
        item.addItem(self._headroom)

        self._vline = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen((128, 128, 128, 160), width=1))
        self._vline.setVisible(False)
        item.addItem(self._vline, ignoreBounds=True)
        self._readout = QLabel(self)
        self._readout.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._readout.setStyleSheet("QLabel { background: rgba(40,40,40,170); color: white; padding: 2px 4px; font-size: 8pt; }")
        self._readout.hide()
        self._message = PlotMessage(self)
        # Rate-limit the crosshair so a fast mouse does not redraw 1000 times a second.
        self._mouse_proxy = pg.SignalProxy(self.scene().sigMouseMoved, rateLimit=30, slot=self._on_mouse_moved)

    # --- series ----------------------------------------------------------------------------

    def add_series(self, key: str, name: str, color: str, symbol: str | None = None, width: float = 1.0,
                   line: bool = True, symbol_size: float = 4) -> SeriesBuffer:
        """A new series drawn as a line and/or symbols; returns its buffer.

        Keep ``width`` 1 for series that grow long: Qt's raster engine draws wider pens through
        its stroker, ~4x slower per segment (a 216,000-sample GPU curve: 4.7 ms vs 1.0 ms).
        """
        pen = pg.mkPen(color, width=width) if line else None
        kwargs = {}
        if symbol:
            kwargs = {"symbol": symbol, "symbolSize": symbol_size, "symbolPen": None,
                      "symbolBrush": pg.mkBrush(pg.mkColor(color).lighter(110))}
        curve = self.getPlotItem().plot(name=name, pen=pen, **kwargs)
        # refresh() decimates every series itself (pyqtgraph's downsampling would scan all of it
        # on every setData, and drop the last partial bucket: the newest episodes)
        if symbol:
            self._decimated.add(key)
        else:
            self._levels[key] = (-1, MinMaxLevels())
        buf = SeriesBuffer()
        self._series[key] = (buf, curve)
        return buf

    def add_derived(self, key: str, source: str, fn, name: str, color: str, width: float = 2.0) -> None:
        """A curve computed from another series (e.g. a rolling mean), kept up to date per batch.

        ``fn(values, start)`` returns the derived values for ``values[start:]`` (it may read
        earlier values); only new points are computed, never the whole history again.
        """
        self.add_series(key, name, color, width=width)
        self._derived[key] = (source, fn)

    def has_series(self, key: str) -> bool:
        return key in self._series

    def buffer(self, key: str) -> SeriesBuffer:
        return self._series[key][0]

    def curve(self, key: str) -> pg.PlotDataItem:
        return self._series[key][1]

    def series_keys(self) -> list[str]:
        return list(self._series)

    def point_count(self) -> int:
        """Points held by the plot's own (non-derived) series."""
        return sum(buf.size for k, (buf, _) in self._series.items() if k not in self._derived)

    def clear_data(self) -> None:
        for buf, curve in self._series.values():
            buf.clear()
            curve.setData([], [])
        self._drawn.clear()

    def _update_derived(self) -> None:
        for key, (source, fn) in self._derived.items():
            src, out = self._series[source][0], self._series[key][0]
            if out.size > src.size:  # the source was cleared (and maybe refilled) since
                out.clear()
            start = out.size
            if src.size > start:
                out.extend(src.steps[start:], src.times[start:], fn(src.values, start))

    # --- drawing ---------------------------------------------------------------------------

    def set_x_mode(self, mode: str) -> None:
        if self.time_only or mode == self.x_mode:
            return
        self.x_mode = mode
        self._apply_x_axis()
        self._drawn.clear()
        self.getPlotItem().enableAutoRange()

    def _apply_x_axis(self) -> None:
        item = self.getPlotItem()
        axis = pg.DateAxisItem(orientation="bottom") if self.x_mode == "time" else pg.AxisItem("bottom")
        item.setAxisItems({"bottom": axis})
        item.setLabel("bottom", X_LABELS[self.x_mode])
        # An axis draws its grid lines too; replaying them costs ~10 ms per plot per frame in
        # Qt's raster engine (the y grid most). Cached, an axis is re-rendered only when its
        # range or size changes, i.e. rarely for y while following a run.
        for side in ("left", "bottom"):
            item.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def refresh(self) -> bool:
        """Push changed series into their curves; returns whether anything was redrawn."""
        if self.paused:
            return False
        changed = False
        self._update_derived()
        for key, (buf, curve) in self._series.items():
            stamp = (buf.version, self.x_mode)
            if self._drawn.get(key) == stamp:
                continue
            self._drawn[key] = stamp
            x, y = buf.x(self.x_mode), buf.values
            if key in self._decimated:
                x, y = self._decimate(x, y)
            elif key in self._levels:
                x, y = self._line_data(key, buf)
            curve.setData(x, y)
            changed = True
        if changed:
            self._follow_extent()
        return changed

    def _follow_extent(self) -> None:
        xs = [buf.x(self.x_mode) for buf, _ in self._series.values() if buf.size]
        if xs:
            self._headroom.follow(min(float(x[0]) for x in xs), max(float(x[-1]) for x in xs))
        else:
            self._headroom.follow(None, None)

    def _in_view(self, x: np.ndarray) -> tuple[int, int]:
        """The index range of ``x`` in view, one point wider each side (all of it while autoscaling)."""
        vb = self.getPlotItem().vb
        if vb.autoRangeEnabled()[0]:
            return 0, len(x)
        left, right = vb.viewRange()[0]
        return max(0, int(np.searchsorted(x, left)) - 1), min(len(x), int(np.searchsorted(x, right, side="right")) + 1)

    def _decimate(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """At most ~MAX_SYMBOLS points of what is in view (all of it while autoscaling)."""
        if len(x) > MAX_SYMBOLS:
            lo, hi = self._in_view(x)
            if (lo, hi) != (0, len(x)):
                # keep the newest point even when it is out of view, so the data's bounds stay whole
                x, y = np.concatenate((x[lo:hi], x[-1:])), np.concatenate((y[lo:hi], y[-1:]))
        idx = envelope_indices(y, MAX_SYMBOLS)
        return x[idx], y[idx]

    def _line_data(self, key: str, buf: SeriesBuffer) -> tuple[np.ndarray, np.ndarray]:
        """The line of what is in view, ~2 points per pixel column."""
        generation, levels = self._levels[key]
        if generation != buf.generation:
            levels.clear()
            self._levels[key] = (buf.generation, levels)
        levels.update(buf.values)
        x = buf.x(self.x_mode)
        start, stop = self._in_view(x)
        return levels.decimate(x, buf.values, start, stop, buckets=max(200, int(self.getPlotItem().vb.width())))

    def _on_x_range_changed(self, *_args) -> None:
        if not self.getPlotItem().vb.autoRangeEnabled()[0]:
            self._redecimate()

    def _on_view_state_changed(self, *_args) -> None:
        auto_x = bool(self.getPlotItem().vb.autoRangeEnabled()[0])
        if auto_x != self._auto_x:  # autoscale switched on or off (the "A" button, the menu, a zoom)
            self._auto_x = auto_x
            self._redecimate()

    def _redecimate(self, *_args) -> None:
        for key in (*self._decimated, *self._levels):
            self._drawn.pop(key, None)

    def follow(self) -> None:
        """Autoscale both axes again and keep following new data."""
        self.getPlotItem().enableAutoRange()
        self._redecimate()  # they were decimated for the zoomed range only

    # --- overlays --------------------------------------------------------------------------

    def set_message(self, text: str | None) -> None:
        """Show ``text`` over the plot instead of data (e.g. why GPU data is not available)."""
        self._message.set_text(text)

    def message(self) -> str | None:
        return self._message.text()

    def _on_mouse_moved(self, event) -> None:
        pos = event[0]
        vb = self.getPlotItem().vb
        if not self.sceneBoundingRect().contains(pos) or not vb.sceneBoundingRect().contains(pos):
            self._vline.setVisible(False)
            self._readout.hide()
            return
        x = vb.mapSceneToView(pos).x()
        self._vline.setPos(x)
        self._vline.setVisible(True)
        self._readout.setText(self.readout_at(x))
        self._readout.adjustSize()
        self._readout.move(max(0, self.width() - self._readout.width() - 6), 4)
        self._readout.show()
        self._readout.raise_()

    def readout_at(self, x: float) -> str:
        """The crosshair text: x and each visible series' value at the nearest point."""
        if self.x_mode == "time":
            head = datetime.fromtimestamp(x).strftime("%H:%M:%S") if x > 0 else "-"
        else:
            head = f"step {x:,.0f}"
        parts = [head]
        for key, (buf, curve) in self._series.items():
            if not buf.size or not curve.isVisible():
                continue
            xs = buf.x(self.x_mode)
            i = int(np.clip(np.searchsorted(xs, x), 0, buf.size - 1))
            if i > 0 and abs(xs[i - 1] - x) < abs(xs[i] - x):
                i -= 1
            value = buf.values[i]
            parts.append(f"{curve.name() or key}: {format_value(float(value))}")
        return "   ".join(parts)

    def set_theme_colors(self, background: str, foreground: str) -> None:
        self.setBackground(background)
        # a see-through backing, so the legend stays readable over the lines it names
        fill = pg.mkColor(background)
        fill.setAlpha(150)
        self.legend.setBrush(fill)
        item = self.getPlotItem()
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(foreground)
            axis.setTextPen(foreground)
        item.titleLabel.setText(item.titleLabel.text, color=foreground)
