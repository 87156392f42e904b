"""A pyqtgraph plot for live series: curves created once, redrawn from buffers on demand.

Data arrives into ``SeriesBuffer``s at any rate; ``refresh()`` (called from the monitor's
~50 ms timer) pushes only the series that changed into their curves with ``setData``. What is
drawn is true at every zoom:

Each series and its drawing is a ``Series`` (``app.plots.series_items``), kept by key with its derived copies in
``SeriesRegistry`` (``app.plots.series_registry``):

- lines are cut from incrementally kept min/max levels (``app.plots.drawing``) to ~2 points per
  pixel column of what is in view, so a 12 h run draws as fast as a 12 s one, and every spike
  is still there; new samples that all fall in a line's last pixel column, within the values
  drawn there, change no pixel and give it nothing (``Series.news_hidden``);
- a series of points (one per episode) shows its points while at most ``MAX_SYMBOLS`` are in
  view, and past that a filled min/max band of them (``band=True``): never only the extremes,
  which would draw a gap where the data has none;
- a series breaks where the run did not run (``mark_break``): no line over the gap;
- a point with no neighbour to draw a line to is drawn as a dot; readings past a warning level
  are drawn over in the alert colour;
- an optional smoothed copy of a series (TensorBoard's EMA, ``set_smoothing``) is drawn over
  the faded raw one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QGraphicsItem, QWidget

from app.plots.axes import StepAxis, ValueAxis, WallTimeAxis
from app.plots.crosshair import Crosshair
from app.plots.headroom import FollowViewBox, Span
from app.plots.on_screen import Clip, in_view
from app.plots.plot_message import PlotMessage
from app.plots.series_items import Series
from app.plots.series_registry import SeriesRegistry, Stamp

X_LABELS = {"step": "timesteps", "time": "wall time"}
MIN_SPAN = {"step": 1000.0, "time": 60.0}  # the x axis never spans less: one point is not a 1-second axis


def format_value(v: float, unit: str = "") -> str:
    if not math.isfinite(v):
        return "-"
    a = abs(v)
    text = f"{v:.3g}" if a != 0 and (a >= 1e5 or a < 1e-3) else f"{v:,.4g}" if a >= 1e4 else f"{v:.4g}"
    return f"{text} {unit}" if unit else text


class LivePlot(SeriesRegistry, pg.PlotWidget):
    """One plot of live series with a crosshair readout and an overlay message.

    ``time_only`` plots (GPU telemetry, which has no timestep) always use wall time on x.
    ``unit`` follows every value the readout names. ``x_label=False``: the x axis unnamed (a small chart of a grid, whose
    ticks and the Monitor's "x:" box say what it is): ~14 px more of its height for the data.
    """

    def __init__(self, title: str, y_label: str, unit: str = "", time_only: bool = False, parent: QWidget | None = None,
                 *, x_label: bool = True):
        view = FollowViewBox()  # autoscale from the extents kept below, in steps (app.plots.headroom)
        super().__init__(parent=parent, viewBox=view, axisItems={"left": ValueAxis("left")})  # labels never crowd
        view.extent = self._data_extent
        self.title = title
        self.unit = unit
        self.time_only = time_only
        self.x_label = x_label
        self.x_mode = "time" if time_only else "step"
        self.paused = False
        self._series: dict[str, Series] = {}
        self._drawn: dict[str, Stamp] = {}
        # key -> (source key, fn(values, start) -> derived values[start:]); a derived series has
        # its own buffer, extended by the source's new points only.
        self._derived: dict[str, tuple[str, Callable[..., np.ndarray]]] = {}
        self._warn_level: float | None = None
        self._y_span: tuple[float, float] | None = None  # a fixed y axis (grows only to fit the data)
        self.smoothing = 0.0
        item = self.getPlotItem()
        item.setTitle(title, size="9pt")
        item.setLabel("left", y_label)
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
        ctrl = item.ctrl  # the menu's transforms: the curves no longer show the values the extents are kept of
        self._transforms = [ctrl.logXCheck, ctrl.logYCheck, ctrl.fftCheck, ctrl.subtractMeanCheck, ctrl.derivativeCheck,
                            ctrl.phasemapCheck]
        for check in self._transforms:
            check.toggled.connect(self._on_transform)
        self.crosshair = Crosshair(self, self.readout_at)
        self._message = PlotMessage(self)
        self.readout_extra: Callable[[float], str | None] | None = None  # more words for the readout at x
        self._cached_rows = -1  # legend rows whose texts are cached (see _cache_texts)
        self._cache_texts()

    def set_title(self, title: str) -> None:
        """A new title (its colour stays the theme's)."""
        if title != self.title:
            self.title = title
            self.getPlotItem().setTitle(title, size="9pt")

    # --- log scale, fixed axes, warning level ------------------------------------------------

    def set_log_y(self, on: bool) -> None:
        self.getPlotItem().setLogMode(y=on)  # the view autoscales as pyqtgraph does meanwhile (_on_transform)
        self._drawn.clear()

    def set_y_span(self, low: float, high: float) -> None:
        """A fixed y axis from ``low`` to ``high`` (it grows only to fit data above ``high``)."""
        self._y_span = (low, high)
        vb = self.getPlotItem().vb
        vb.enableAutoRange(y=False)
        vb.setYRange(low, high, padding=0)

    def set_warn_level(self, level: float | None) -> None:
        """Draw the readings at or above ``level`` in the alert colour (None: no level)."""
        if level == self._warn_level:
            return
        self._warn_level = level
        self._drawn.clear()

    # --- drawing ---------------------------------------------------------------------------

    def set_x_mode(self, mode: str) -> None:
        if self.time_only or mode == self.x_mode:
            return
        self.x_mode = mode
        self._apply_x_axis()
        self._drawn.clear()
        self.follow()

    def _apply_x_axis(self) -> None:
        item = self.getPlotItem()
        axis = WallTimeAxis("bottom") if self.x_mode == "time" else StepAxis("bottom")
        self._x_values_shown = any(s.buf.size for s in getattr(self, "_series", {}).values())  # none while empty
        axis.setStyle(showValues=self._x_values_shown)
        item.setAxisItems({"bottom": axis})
        if self.x_label:
            item.setLabel("bottom", X_LABELS[self.x_mode])
        # An axis draws its grid lines too; replaying them costs ~10 ms per plot per frame in
        # Qt's raster engine (the y grid most). Cached, an axis is re-rendered only when its
        # range or size changes, i.e. rarely for y while following a run.
        for side in ("left", "bottom"):
            item.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._cached_rows = -1

    def _cache_texts(self) -> None:
        """The title, the axes' labels and the legend painted from a cached image: each is a text item of its own
        (an axis' cache holds its ticks, not its label) that Qt lays out again on every paint, ~0.2 ms a plot; cached,
        one is re-rendered only when its text, colour or place changes."""
        if self._cached_rows == len(self.legend.items):
            return
        item = self.getPlotItem()
        texts = [item.titleLabel.item, self.legend, *(item.getAxis(side).label for side in ("left", "bottom"))]
        texts += [part for sample, label in self.legend.items for part in (sample, label.item)]
        for text in texts:
            text.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._cached_rows = len(self.legend.items)

    def in_view(self, clip: Clip | None = None) -> bool:
        """Some of the plot is on screen (``app.plots.on_screen``; ``clip``: the parts of its ancestors found
        for another plot of the same redraw)."""
        return in_view(self, clip)

    def refresh(self, clip: Clip | None = None) -> bool:
        """Push changed series into their curves; returns whether anything was redrawn.

        A plot out of view (a hidden tab, scrolled out of the chart grid) draws nothing: its data
        keeps arriving in the buffers, and the first refresh in view draws it all at once. ``clip``: what one
        redraw of several plots has found of their ancestors' shown parts.
        """
        if self.paused or not self.in_view(clip):
            return False
        self._cache_texts()  # a legend row or an x axis made since
        changed = False
        self._update_derived()
        view = None  # the x range in view and its pixels, found for the first series with news
        for key, series in self._series.items():
            stamp = (series.buf.version, self.x_mode, self._warn_level)
            if self._drawn.get(key) == stamp:
                continue
            self._drawn[key] = stamp
            x = series.buf.x(self.x_mode)
            start, stop = self._in_view(x)
            buckets = self._buckets()
            drawing = (series.buf.generation, series.buf.version, self.x_mode, start, stop, buckets, self._warn_level)
            if series.drawn == drawing:  # the same points over the same columns: its curves hold them already
                continue
            if view is None:
                view = self._pixel_view()
            if not series.points and series.news_hidden(drawing, x, view):
                continue  # nothing a pixel would show: drawn with the samples to come
            series.drawn = drawing
            if series.points:
                series.draw_points(x, start, stop, max(100, buckets // 2))
            else:
                shown = series.draw_line(self.getPlotItem(), x, start, stop, buckets, self._warn_level)
                series.basis = (view, tuple(series.buf.breaks))
                if self._y_span is not None and len(shown):
                    self._fit_y(shown)
            changed = True
        if changed:
            self._follow_extent()
        return changed

    def _pixel_view(self) -> tuple[float, float, float]:
        """The x range in view and the view's width in pixels."""
        vb = self.getPlotItem().vb
        (low, high), width = vb.viewRange()[0], vb.width()
        return float(low), float(high), 0.0 if vb.transformed else float(width)  # transformed: no pixel of x known

    def _buckets(self) -> int:
        return max(200, int(self.getPlotItem().vb.width()))

    def _fit_y(self, y: np.ndarray) -> None:
        assert self._y_span is not None
        low, high = self._y_span
        top = float(np.nanmax(y, initial=-np.inf))
        if math.isfinite(top) and top > high:
            high = top * 1.05
        vb = self.getPlotItem().vb
        if not vb.autoRangeEnabled()[1] and tuple(vb.viewRange()[1]) != (low, high):
            vb.setYRange(low, high, padding=0)

    def band_shown(self, key: str) -> bool:
        """The min/max band of ``key`` is what is drawn (its fill has a shape), not the points."""
        band = self._series[key].band
        return band is not None and not band.is_empty()

    def _follow_extent(self) -> None:
        self.getPlotItem().vb.follow_data()
        self._show_x_values(any(s.buf.size for s in self._series.values()))

    def _data_extent(self) -> tuple[Span | None, Span | None]:
        """The data's x span (at least ``MIN_SPAN``) and y extent, for the view to follow (None: no data)."""
        xs = [s.buf.x(self.x_mode) for s in self._series.values() if s.buf.size]
        x = None
        if xs:
            first, last = min(float(v[0]) for v in xs), max(float(v[-1]) for v in xs)
            x = (first, max(last, first + MIN_SPAN[self.x_mode]))
        low, high = self._y_extent()
        return x, (low, high) if low is not None and high is not None else None

    def _show_x_values(self, show: bool) -> None:
        """An empty plot shows no tick values (a time axis over 0..1 s read "00.500").

        Only on a change: ``setStyle`` throws away the axis' drawing, and re-making the x axis of
        10 plots on every frame was about a third of a 12 h run's redraw (bench/gui_scale.py, profiled).
        """
        if show != self._x_values_shown:
            self._x_values_shown = show
            self.getPlotItem().getAxis("bottom").setStyle(showValues=show)

    def _y_extent(self) -> tuple[float | None, float | None]:
        extents = [e for e in (s.extent() for s in self._series.values()) if e is not None]
        return (min(lo for lo, _ in extents), max(hi for _, hi in extents)) if extents else (None, None)

    def _in_view(self, x: np.ndarray) -> tuple[int, int]:
        """The index range of ``x`` in view, one point wider each side (all of it while autoscaling)."""
        vb = self.getPlotItem().vb
        if vb.autoRangeEnabled()[0]:
            return 0, len(x)
        left, right = vb.viewRange()[0]
        return max(0, int(np.searchsorted(x, left)) - 1), min(len(x), int(np.searchsorted(x, right, side="right")) + 1)

    def _on_x_range_changed(self, *_args: object) -> None:
        if not self.getPlotItem().vb.autoRangeEnabled()[0]:
            self._redecimate()

    def _on_view_state_changed(self, *_args: object) -> None:
        auto_x = bool(self.getPlotItem().vb.autoRangeEnabled()[0])
        if auto_x != self._auto_x:  # autoscale switched on or off (the "A" button, the menu, a zoom)
            self._auto_x = auto_x
            self._redecimate()

    def _on_transform(self, *_args: object) -> None:
        self.getPlotItem().vb.set_transformed(any(check.isChecked() for check in self._transforms))

    def _redecimate(self, *_args: object) -> None:
        self._drawn.clear()

    def forget_drawn(self) -> None:
        """The next refresh gives every curve its data again, changed or not (bench/gui_scale.py's worst case)."""
        self._drawn.clear()
        for series in self._series.values():
            series.drawn = None

    def follow(self) -> None:
        """Autoscale again and keep following new data (a fixed y axis stays fixed)."""
        item = self.getPlotItem()
        if self._y_span is None:
            item.enableAutoRange()
        else:
            item.vb.enableAutoRange(x=True, y=False)
            item.vb.setYRange(*self._y_span, padding=0)
        self._redecimate()  # they were decimated for the zoomed range only

    # --- overlays --------------------------------------------------------------------------

    def set_message(self, text: str | None) -> None:
        """Show ``text`` over the plot instead of data (e.g. why GPU data is not available)."""
        self._message.set_text(text)

    def message(self) -> str | None:
        return self._message.text()

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt API)
        self.crosshair.hide()
        super().leaveEvent(event)

    def readout_at(self, x: float) -> str:
        """The crosshair text: x and each visible series' value (with its unit) at the nearest point."""
        if self.x_mode == "time":
            head = datetime.fromtimestamp(x).strftime("%H:%M:%S") if x > 0 else "-"
        else:
            head = f"step {x:,.0f}"
        parts = [head]
        for key, series in self._series.items():
            buf = series.buf
            if not buf.size or not series.curve.isVisible():
                continue
            xs = buf.x(self.x_mode)
            i = int(np.clip(np.searchsorted(xs, x), 0, buf.size - 1))
            if i > 0 and abs(xs[i - 1] - x) < abs(xs[i] - x):
                i -= 1
            parts.append(f"{series.curve.name() or key}: {format_value(float(buf.values[i]), self.unit)}")
        extra = self.readout_extra(x) if self.readout_extra is not None else None
        if extra:
            parts.append(extra)
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

