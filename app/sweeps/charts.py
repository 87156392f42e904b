"""The Sweeps tab's three charts, each drawn from a ``sweep status`` report (plain dicts).

- ``ObjectivePlot``: each told trial's value by trial number (coloured by state), and the best so far.
- ``ImportancePlot``: Optuna's parameter importances as horizontal bars.
- ``ParallelCoordinates``: one line per trial over an axis per parameter (normalised to its range;
  a choice's options spread evenly) and the objective last, coloured from worst to best.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from app.theme import MUTED, TRIAL_STATE_COLORS

Report = dict[str, Any]


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def shown_value(row: dict[str, Any]) -> float | None:
    """A trial's value; a pruned one's is where it was cut (its last reported value)."""
    value = row.get("value")
    if not _finite(value) and row.get("state") == "pruned":
        value = row.get("last_value")
    return float(value) if value is not None and _finite(value) else None


class ObjectivePlot(pg.PlotWidget):
    """Value per trial number, and the best value so far as a step line."""

    def __init__(self) -> None:
        super().__init__()
        self.setMinimumHeight(140)
        self.setLabel("bottom", "trial")
        self.setLabel("left", "objective")
        self.showGrid(x=True, y=True, alpha=0.2)
        self.best_curve = self.plot([], [], pen=pg.mkPen(TRIAL_STATE_COLORS["complete"], width=2), stepMode=None)
        self.points = pg.ScatterPlotItem(size=9)
        self.addItem(self.points)

    def show_report(self, report: Report) -> None:
        spots, best_x, best_y = [], [], []
        maximize = report.get("direction", "maximize") == "maximize"
        best: float | None = None
        for row in report.get("trials", []):
            value = shown_value(row)
            if value is None:
                continue
            color = TRIAL_STATE_COLORS.get(row["state"], MUTED)
            spots.append({"pos": (row["number"], value), "brush": pg.mkBrush(color), "pen": pg.mkPen(color),
                          "symbol": "o" if row["state"] == "complete" else "t", "data": row["number"]})
            if row["state"] == "complete":
                best = value if best is None or (value > best if maximize else value < best) else best
                best_x.append(row["number"])
                best_y.append(best)
        self.points.setData(spots)
        self.best_curve.setData(best_x, best_y)

    @property
    def point_count(self) -> int:
        return len(self.points.data)


class ImportancePlot(pg.PlotWidget):
    """One horizontal bar per parameter, most important on top."""

    def __init__(self) -> None:
        super().__init__()
        self.setMinimumHeight(120)
        self.setLabel("bottom", "importance (fANOVA, share)")
        self.setMouseEnabled(x=False, y=False)
        self.bars: pg.BarGraphItem | None = None
        self.labels: list[pg.TextItem] = []
        self.note = pg.TextItem("importance needs two completed trials", color=MUTED, anchor=(0.5, 0.5))
        self.addItem(self.note)
        self.values: dict[str, float] = {}

    def show_importances(self, values: dict[str, float]) -> None:
        self.values = dict(values)
        if self.bars is not None:
            self.removeItem(self.bars)
            self.bars = None
        for label in self.labels:
            self.removeItem(label)
        self.labels = []
        self.note.setVisible(not values)
        if not values:
            self.note.setPos(0.5, 0.5)
            self.setXRange(0, 1)
            self.setYRange(0, 1)
            return
        names = sorted(values, key=values.__getitem__)  # most important last: drawn on top
        ys = list(range(len(names)))
        widths = [values[n] for n in names]
        self.bars = pg.BarGraphItem(x0=[0] * len(names), y=ys, height=0.6, width=widths,
                                    brush=pg.mkBrush(TRIAL_STATE_COLORS["complete"]))
        self.addItem(self.bars)
        for y, name in zip(ys, names, strict=True):
            label = pg.TextItem(f"{values[name]:.2f}", anchor=(0, 0.5))
            label.setPos(values[name] + 0.01, y)
            self.addItem(label)
            self.labels.append(label)
        self.getAxis("left").setTicks([[(y, name) for y, name in zip(ys, names, strict=True)]])
        self.setXRange(0, 1.1)
        self.setYRange(-0.6, len(names) - 0.4)


def axis_positions(values: list[Any], kind: str) -> tuple[list[float | None], list[tuple[float, str]]]:
    """Values placed on a 0..1 axis and the ticks to label it: numbers by range (log when ``log``), else options."""
    if kind == "choice" or not all(_finite(v) for v in values if v is not None):
        numeric = all(_finite(v) for v in values if v is not None)
        options = sorted({json.dumps(v) for v in values if v is not None}, key=lambda o: (float(o), o) if numeric else (0.0, o))
        if not options:
            return [None] * len(values), []
        step = 1 / max(1, len(options) - 1)
        where = {o: (i * step if len(options) > 1 else 0.5) for i, o in enumerate(options)}
        return ([None if v is None else where[json.dumps(v)] for v in values],
                [(where[o], o if len(o) <= 14 else o[:13] + "…") for o in options])
    nums = [float(v) for v in values if v is not None]
    if not nums:
        return [None] * len(values), []
    log = kind == "log" and min(nums) > 0

    def t(x: float) -> float:
        return math.log10(x) if log else x

    lo, hi = t(min(nums)), t(max(nums))
    span = hi - lo or 1.0
    pos = [None if v is None else (t(float(v)) - lo) / span if hi > lo else 0.5 for v in values]
    if hi <= lo:
        return pos, [(0.5, f"{nums[0]:.3g}")]
    return pos, [(0.0, f"{min(nums):.3g}"), (1.0, f"{max(nums):.3g}")]


class ParallelCoordinates(pg.PlotWidget):
    """An axis per parameter and one for the objective; a line per completed trial, worst to best in
    colour, and pruned trials (their value where they were cut) as thin dashed lines behind them."""

    def __init__(self) -> None:
        super().__init__()
        self.setMinimumHeight(160)
        self.setMouseEnabled(x=False, y=False)
        self.hideAxis("left")
        self.lines: list[pg.PlotDataItem] = []
        self.axis_items: list[Any] = []
        self.axis_names: list[str] = []

    def _clear(self) -> None:
        for item in [*self.lines, *self.axis_items]:
            self.removeItem(item)
        self.lines, self.axis_items = [], []

    def show_report(self, report: Report, kinds: dict[str, str]) -> None:
        self._clear()
        rows = [r for r in report.get("trials", []) if shown_value(r) is not None and r["state"] in ("complete", "pruned")]
        rows.sort(key=lambda r: r["state"] == "complete")  # completed trials drawn last, on top
        params = list(kinds)
        self.axis_names = [*params, "objective"]
        columns = [axis_positions([r["params"].get(p) for r in rows], kinds[p]) for p in params]
        columns.append(axis_positions([shown_value(r) for r in rows], "number"))
        for x, (name, (_, ticks)) in enumerate(zip(self.axis_names, columns, strict=True)):
            line = pg.InfiniteLine(pos=x, angle=90, pen=pg.mkPen(MUTED, width=1))
            self.addItem(line)
            self.axis_items.append(line)
            title = pg.TextItem(name, color=MUTED, anchor=(0.5, 1.0))
            title.setPos(x, 1.08)
            self.addItem(title)
            self.axis_items.append(title)
            for y, text in ticks:
                label = pg.TextItem(text, color=MUTED, anchor=(0, 0.5), fill=pg.mkBrush(self.backgroundBrush().color()))
                label.setPos(x + 0.02, y)
                self.addItem(label)
                self.axis_items.append(label)
        maximize = report.get("direction", "maximize") == "maximize"
        for i, row in enumerate(rows):
            ys = [col[0][i] for col in columns]
            goodness = columns[-1][0][i] or 0.0
            goodness = goodness if maximize else 1 - goodness
            xs = [float(x) for x, y in enumerate(ys) if y is not None]
            if row["state"] == "complete":
                pen = pg.mkPen(QColor.fromHsvF(0.33 * goodness, 0.75, 0.85), width=2)  # red (worst) to green (best)
            else:
                pen = pg.mkPen(MUTED, width=1, style=Qt.PenStyle.DashLine)
            curve = self.plot(xs, [float(y) for y in ys if y is not None], pen=pen)
            curve.setToolTip(f"trial {row['number']} ({row['state']}): {shown_value(row):.4g}")
            self.lines.append(curve)
        self.getAxis("bottom").setTicks([[(x, "") for x in range(len(self.axis_names))]])
        self.setXRange(-0.2, len(self.axis_names) - 0.5)
        self.setYRange(-0.05, 1.15)
