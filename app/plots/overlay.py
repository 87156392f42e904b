"""Reward curves of several runs on one plot, aligned on timesteps or on seconds since each start.

Grouped (``set_groups``): one line per group of seeds, its aggregate, with its 95 % bootstrap band and,
on demand, each seed thin and faint (``app.plots.group_items``); the title names the statistic.

The baseline, when one is chosen, is a flat band across the plot: its mean reward ± its spread
(a baseline's policy does not learn, so one level says what it does). A legend of more than a few
curves goes beside the plot (``app.plots.side_legend``), where it covers neither curves nor the baseline's label.

Plot export: PNG through pyqtgraph's ImageExporter; SVG written from the curve data by
``core.results.svg`` (pyqtgraph 0.14's SVGExporter raises ValueError with PySide6 6.12, and Qt's
QSvgGenerator painting the scene misplaces the curves against the axes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from app.plots.group_items import GroupItems, draw_group
from app.plots.plot_message import PlotMessage
from app.plots.side_legend import SideLegend
from app.theme import BASELINE_COLOR, SERIES_COLORS
from core.results.curves import RewardCurve, legend_labels
from core.results.group_curves import RESAMPLES, GroupCurve
from core.results.svg import curves_svg
from core.run.episodes import REWARD_WINDOW
from core.util.files import write_atomic

X_MODES = {"step": "timesteps", "time": "wall time since start (s)"}
EMPTY = "Tick runs on the left to overlay their reward curves."
TITLE = f"Episode reward, mean of {REWARD_WINDOW}"
STATISTIC_NAMES = {"mean": "mean", "iqm": "IQM"}


class OverlayPlot(pg.PlotWidget):
    """One curve per run: the rolling mean of its episode rewards, with a legend by run name; or one per group."""

    x_mode_changed = Signal(str)  # grouped curves are computed for one x mode: their owner computes them again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent)
        self.x_mode = "step"
        self._curves: list[RewardCurve] = []
        item = self.getPlotItem()
        item.setTitle(TITLE, size="9pt")
        item.setLabel("left", "reward")
        item.showGrid(x=True, y=True, alpha=0.25)
        self.legend = SideLegend(item, labelTextSize="8pt")
        self._label_x()
        self.setMinimumHeight(180)
        self._message = PlotMessage(self)
        self._message.set_text(EMPTY)
        self._baseline: tuple[float, float, str] | None = None
        self.baseline_band: pg.LinearRegionItem | None = None
        self.baseline_line: pg.InfiniteLine | None = None
        self._groups: list[GroupCurve] | None = None  # None: each run's curve
        self.group_items: list[GroupItems] = []

    def _label_x(self) -> None:
        self.getPlotItem().setLabel("bottom", X_MODES[self.x_mode])

    def set_x_mode(self, mode: str) -> None:
        """``step`` (timesteps) or ``time`` (seconds since each run's start)."""
        if mode not in X_MODES:
            raise ValueError(f"x mode {mode!r}: use one of {', '.join(X_MODES)}")
        changed = mode != self.x_mode
        self.x_mode = mode
        self._label_x()
        if self._groups is None:
            self.set_curves(self._curves)
        elif changed:  # the groups' grid was in the other x: drawn again when their owner has them
            self.set_groups([], False, computing=True)
        if changed:
            self.x_mode_changed.emit(mode)

    def set_baseline(self, mean: float | None, spread: float | None = None, label: str = "baseline") -> None:
        """Draw the baseline as a flat band (``mean`` ± ``spread``) and a dashed line; None: none."""
        self._baseline = None if mean is None else (float(mean), float(spread or 0.0), label)
        self._draw_baseline()

    def _draw_baseline(self) -> None:
        item = self.getPlotItem()
        for old in (self.baseline_band, self.baseline_line):
            if old is not None:
                item.removeItem(old)
        self.baseline_band = self.baseline_line = None
        if self._baseline is None:
            return
        mean, spread, label = self._baseline
        color = pg.mkColor(BASELINE_COLOR)
        fill = pg.mkColor(BASELINE_COLOR)
        fill.setAlpha(45)
        self.baseline_band = pg.LinearRegionItem((mean - spread, mean + spread), orientation="horizontal", movable=False,
                                                 brush=pg.mkBrush(fill), pen=pg.mkPen(None))
        self.baseline_band.setZValue(-20)
        text = f"{label}: {mean:,.2f}" + (f" ± {spread:,.2f}" if spread else "")
        self.baseline_line = pg.InfiniteLine(mean, angle=0, movable=False, label=text,
                                             pen=pg.mkPen(color, width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine),
                                             labelOpts={"position": 0.02, "color": BASELINE_COLOR, "anchors": [(0, 1), (0, 1)]})
        item.addItem(self.baseline_band)
        item.addItem(self.baseline_line)

    def baseline_text(self) -> str | None:
        return self.baseline_line.label.toPlainText() if self.baseline_line is not None else None

    def _clear(self) -> pg.PlotItem:
        item = self.getPlotItem()
        item.clear()  # removes the data items and their legend entries
        self.baseline_band = self.baseline_line = None  # cleared with them
        self.group_items = []
        return item

    def set_groups(self, groups: list[GroupCurve], show_seeds: bool = False, computing: bool = False) -> None:
        """One line per group (its mean or IQM over seeds) with its band; each seed too with ``show_seeds``."""
        self._groups = list(groups)
        item = self._clear()
        statistic = STATISTIC_NAMES[groups[0].statistic] if groups else "mean"
        item.setTitle(f"Episode reward (mean of {REWARD_WINDOW}): {statistic} of seeds, 95 % CI", size="9pt")
        cut = [f"{g.label} ends at {g.cut_at:,.0f}, where its shortest seed ends" for g in groups if g.cut_at is not None]
        self.setToolTip("\n".join([f"{statistic} over each group's seeds on a common grid; the band: a 95 % percentile "
                                    f"bootstrap confidence interval ({RESAMPLES:,} resamples of the seeds)", *cut]))
        for i, group in enumerate(groups):
            self.group_items.append(draw_group(item, group, SERIES_COLORS[i % len(SERIES_COLORS)], show_seeds))
        self.legend.place()
        self._draw_baseline()
        item.enableAutoRange()
        if computing:
            self._message.set_text("Averaging the seeds…")
        elif not groups:
            self._message.set_text("The ticked runs have no finished episodes yet.")
        else:
            self._message.set_text(None)

    def grouped(self) -> bool:
        return self._groups is not None

    def groups(self) -> list[GroupCurve]:
        return list(self._groups or [])

    def set_curves(self, curves: list[RewardCurve]) -> None:
        """Each run's own curve (and back from grouped curves)."""
        self._curves = list(curves)
        self._groups = None
        item = self._clear()
        item.setTitle(TITLE, size="9pt")
        self.setToolTip("")
        for i, (curve, label) in enumerate(zip(self._curves, legend_labels(self._curves), strict=True)):
            x = curve.steps if self.x_mode == "step" else curve.seconds
            pen = pg.mkPen(SERIES_COLORS[i % len(SERIES_COLORS)], width=2)
            data = item.plot(np.asarray(x, dtype=float), np.asarray(curve.mean_reward, dtype=float), pen=pen, name=label)
            data.setClipToView(True)
            data.setDownsampling(auto=True, method="peak")
        self.legend.place()
        self._draw_baseline()
        item.enableAutoRange()
        if not self._curves:
            self._message.set_text(EMPTY)
        elif not any(len(c.steps) for c in self._curves):
            self._message.set_text("The ticked runs have no finished episodes yet.")
        else:
            self._message.set_text(None)

    def set_message(self, text: str | None) -> None:
        self._message.set_text(text)

    def message(self) -> str | None:
        return self._message.text()

    def curve_labels(self) -> list[str]:
        return self.legend.names()

    # --- export -----------------------------------------------------------------------------------

    def save_png(self, path: Path | str, width: int = 1600) -> None:
        from pyqtgraph.exporters import ImageExporter

        exporter = ImageExporter(self.getPlotItem())
        exporter.parameters()["width"] = width
        exporter.export(str(path))

    def save_svg(self, path: Path | str) -> None:
        """The curves as drawn (same x mode, labels, colours and background), as an SVG document."""
        background = self.backgroundBrush().color().name()
        foreground = self.getPlotItem().getAxis("bottom").textPen().color().name()
        if self._groups is not None:  # each group's aggregate and band (the seeds are left out)
            curves = [RewardCurve(g.key, g.legend, g.legend, g.x.tolist(), g.x.tolist(), g.center.tolist()) for g in self._groups]
            bands = [None if g.low is None or g.high is None else (g.x.tolist(), g.low.tolist(), g.high.tolist())
                     for g in self._groups]
            title, labels = self.getPlotItem().titleLabel.text, [g.legend for g in self._groups]
        else:
            curves, bands, title, labels = self._curves, None, TITLE, legend_labels(self._curves)
        write_atomic(Path(path), curves_svg(curves, self.x_mode, title=title, labels=labels, background=background,
                                            foreground=foreground, colors=SERIES_COLORS, bands=bands))
