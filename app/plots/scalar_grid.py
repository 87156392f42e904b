"""One small chart per scalar SB3 logs, in a grid the user picks from (TensorBoard's scalars tab).

SB3 logs a dozen scalars per update (losses, explained variance, KL, clip fraction, entropy
coefficient, learning rate, ...); each gets its own chart on its own axis instead of every loss
on one linear axis. The grid starts with the training speed. The "Charts" menu shows or hides
each chart; the choice is remembered (QSettings) for the next run and the next window. Keys no
one chose yet follow ``hidden_by_default``: SB3's bookkeeping (``time/*``, ``train/n_updates``)
and the rollout means the reward plot already shows.

A chart is a pyqtgraph plot with its menus (~40 ms to build): only the charts shown are built. A hidden key's
columns wait in a list until the user shows it (a PPO run logs ~7 hidden keys beside its ~9 shown ones).

The view shows whole rows only, none under ``MIN_ROW``: as many rows as its height has room for share it, and the
rest scroll a row at a time. (Rows of a fixed 100 px in a view of 68, a laptop's Monitor while a run trained, showed
each chart's top 68 px: its title and a strip of plot, the x axis cut off: issue 42.)
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import QGridLayout, QMenu, QScrollArea, QToolButton, QVBoxLayout, QWidget

from app.plots.live_plot import LivePlot
from app.plots.training_plots import ScalarPlot, SpeedPlot
from app.settings import get_setting, set_setting
from app.theme import SERIES_COLORS

COLUMNS = 3
ROW = 140     # the height a row is given where the view has room for more rows than the charts fill
MIN_ROW = 100  # the least: a title, three ticks and the axis labels (a chart's plot area is then ~50 px)
ENV_PREFIX = "env/"  # charts of the env's own measures (env.info_keys), from the episode records
SPEED = "speed"  # the speed chart's key in the menu and the settings


def hidden_by_default(key: str) -> bool:
    return key.startswith(("time/", "rollout/")) or key == "train/n_updates"


class ScalarGrid(QWidget):
    """``speed`` and ``charts`` (key -> ScalarPlot); ``picker`` is the button with the chart menu."""

    layout_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.speed = SpeedPlot()
        self.charts: dict[str, ScalarPlot] = {}  # the charts built, in the grid's order: every key shown, at least
        self._arrived: list[str] = []  # every key logged, in the order it came (its colour)
        self._unbuilt: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]] = {}  # a hidden key's
        # columns (None: a break) until its chart is built
        self.smoothing = 0.0
        self.log_y = False
        self._theme: tuple[str, str] | None = None
        self._shown: set[str] = set(get_setting("monitor/shown_charts", []) or [])
        self._hidden: set[str] = set(get_setting("monitor/hidden_charts", []) or [])
        self.picker = QToolButton()
        self.picker.setText("Charts")
        self.picker.setToolTip("Which charts of the logged scalars to show (remembered)")
        self.picker.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.picker)
        self.menu.aboutToShow.connect(self._fill_menu)
        self.picker.setMenu(self.menu)

        self._inner = QWidget()
        self._grid = QGridLayout(self._inner)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(4)
        self.charts_area = QScrollArea()
        self.charts_area.setWidgetResizable(True)
        self.charts_area.setWidget(self._inner)
        # never shorter than one whole row: a splitter dragged (or a window made) shorter stops there
        self.charts_area.setMinimumHeight(MIN_ROW + 2 * self.charts_area.frameWidth())
        self._pitch = MIN_ROW + self._grid.verticalSpacing()  # a row and the gap under it: one step of the scroll bar
        bar = self.charts_area.verticalScrollBar()
        bar.valueChanged.connect(self._snap)
        bar.sliderReleased.connect(lambda: self._snap(bar.value()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.charts_area)
        self._relayout()

    # --- what is shown -------------------------------------------------------------------------

    def is_shown(self, key: str) -> bool:
        if key in self._shown:
            return True
        if key in self._hidden:
            return False
        return not hidden_by_default(key)

    def set_shown(self, key: str, shown: bool) -> None:
        (self._shown.add if shown else self._shown.discard)(key)
        (self._hidden.discard if shown else self._hidden.add)(key)
        set_setting("monitor/shown_charts", sorted(self._shown))
        set_setting("monitor/hidden_charts", sorted(self._hidden))
        self._relayout()

    def keys(self) -> list[str]:
        """Every key logged (built or not), in the grid's order: the env's own measures first."""
        return [SPEED, *sorted(self._arrived, key=lambda k: not k.startswith(ENV_PREFIX))]

    def plots(self) -> list[LivePlot]:
        """Every chart built (shown, or shown once): they all keep their data."""
        return [self.speed, *self.charts.values()]

    def shown_plots(self) -> list[LivePlot]:
        return [self.speed if k == SPEED else self.charts[k] for k in self.keys() if self.is_shown(k) and
                (k == SPEED or k in self.charts)]

    def _fill_menu(self) -> None:
        self.menu.clear()
        groups: dict[str, list[str]] = {}
        for key in self.keys():
            groups.setdefault(key.split("/", 1)[0] if "/" in key else "", []).append(key)
        for n, (_group, keys) in enumerate(sorted(groups.items())):
            if n:
                self.menu.addSeparator()
            for key in sorted(keys):
                action = QAction("steps/s (speed)" if key == SPEED else key, self.menu)
                action.setCheckable(True)
                action.setChecked(self.is_shown(key))
                action.toggled.connect(lambda on, k=key: self.set_shown(k, on))
                self.menu.addAction(action)
        if not self._arrived:
            note = self.menu.addAction("(the run has logged no scalars yet)")
            note.setEnabled(False)

    def _relayout(self) -> None:
        for key in [k for k in self._unbuilt if self.is_shown(k)]:
            self._build(key)
        while self._grid.count():
            self._grid.takeAt(0)
        shown = self.shown_plots()
        for i, plot in enumerate(shown):
            self._grid.addWidget(plot, i // COLUMNS, i % COLUMNS)
        # shown once in the grid: a new chart shown before had no parent, a window of its own for an instant (a flash
        # on the desktop, and every open menu closed, a row's » among them)
        for plot in self.plots():
            plot.setVisible(plot in shown)
        self._fit_rows()
        self.layout_changed.emit()

    def _fit_rows(self) -> None:
        """Rows as tall as the view holds a whole number of them, none under ``MIN_ROW``, as near ``ROW`` as that
        allows: a view of 198 px shows one row of 198 (rather than one of 140 and the top 54 px of the next), one
        of 246 two rows of 121; the rest scroll by whole rows."""
        view = self.charts_area.viewport().height()
        spacing = self._grid.verticalSpacing()
        rows = max(1, -(-len(self.shown_plots()) // COLUMNS))
        most = max(1, (view + spacing) // (MIN_ROW + spacing))  # the most rows of MIN_ROW the view holds
        shown = max(1, min(rows, most, round((view + spacing) / (ROW + spacing))))
        row = max(MIN_ROW, (view - spacing * (shown - 1)) // shown)
        for plot in self.plots():
            plot.setMinimumHeight(row)
        for r in range(max(rows, self._grid.rowCount())):  # rows a removed chart left: none
            self._grid.setRowMinimumHeight(r, row if r < rows else 0)
        self._pitch = row + spacing
        bar = self.charts_area.verticalScrollBar()
        bar.setSingleStep(self._pitch)  # the wheel moves a row, at most the rows in view (Qt bounds it by the page)
        bar.setPageStep(shown * self._pitch)
        self._snap(bar.value())

    def _snap(self, value: int) -> None:
        """The view starts at a row's top (a slider let go mid-row moves to the nearest)."""
        bar = self.charts_area.verticalScrollBar()
        if bar.isSliderDown() or value >= bar.maximum():
            return
        snapped = min(bar.maximum(), round(value / self._pitch) * self._pitch)
        if snapped != value:
            bar.setValue(snapped)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_rows()

    # --- data ----------------------------------------------------------------------------------

    def add_speed(self, steps: np.ndarray, times: np.ndarray, fps: np.ndarray) -> None:
        self.speed.buffer("fps").extend(steps, times, fps)

    def add_scalars(self, train: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        """``key -> (steps, times, values)``; a shown key's chart is made the first time it comes, all of a batch's
        new ones before the grid is laid out once; a hidden key's columns are kept until it is shown."""
        new = False
        for key, columns in train.items():
            if key not in self.charts and key not in self._unbuilt:
                self._arrived.append(key)
                self._unbuilt[key] = []
                new = True
            if key in self.charts:
                self.charts[key].buffer("value").extend(*columns)
            else:
                self._unbuilt[key].append(columns)
        if new:
            self._relayout()  # builds the new shown charts with the columns they got

    def _build(self, key: str) -> None:
        """Make ``key``'s chart and give it the columns (and breaks) it got while it was not built."""
        chart = self._make_chart(key)
        buf = chart.buffer("value")
        for columns in self._unbuilt.pop(key):
            if columns is None:
                buf.mark_break()
            else:
                buf.extend(*columns)
        self.charts[key] = chart
        order = self.keys()  # the env's own measures come first, beside the reward
        self.charts = dict(sorted(self.charts.items(), key=lambda kv: order.index(kv[0])))

    def _make_chart(self, key: str) -> ScalarPlot:
        chart = ScalarPlot(key, SERIES_COLORS[self._arrived.index(key) % len(SERIES_COLORS)])
        chart.set_x_mode(self.speed.x_mode)
        if self.log_y:
            chart.set_log_y(True)
        if self.smoothing:
            chart.set_smoothing(self.smoothing)
        if self._theme is not None:
            chart.set_theme_colors(*self._theme)
        return chart

    def mark_break(self) -> None:
        for plot in self.plots():
            plot.mark_break()
        for columns in self._unbuilt.values():
            columns.append(None)

    def reset(self) -> None:
        """Another run: its charts go (the speed chart stays, emptied)."""
        for chart in self.charts.values():
            self._grid.removeWidget(chart)
            chart.hide()
            chart.deleteLater()  # still parented: never a top-level window, even for a moment
        self.charts = {}
        self._arrived, self._unbuilt = [], {}
        self.speed.reset()
        self._relayout()

    # --- view ----------------------------------------------------------------------------------

    def set_smoothing(self, weight: float) -> None:
        self.smoothing = weight
        for plot in self.plots():
            plot.set_smoothing(weight)

    def set_log_y(self, on: bool) -> None:
        self.log_y = on
        for plot in self.plots():
            plot.set_log_y(on)

    def set_theme_colors(self, background: str, foreground: str) -> None:
        self._theme = (background, foreground)
        for plot in self.plots():
            plot.set_theme_colors(background, foreground)
