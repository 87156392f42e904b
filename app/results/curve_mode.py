"""The Results tab's choice of seed groups: each run on its own, or one per group of seeds (mean or IQM, with its band).

``CurveModeControls`` sits over the Results plot: "Seeds" (each run / launch group / config:
``core.results.grouping``), which also decides the table's rows (the panel listens to ``grouping_changed``),
"Curve" (the group's mean or IQM), "Each seed" (each seed thin and faint behind its group); its "Count unfinished"
(count the seeds that did not finish in their group's curve and row; by default they are left out and listed) the
panel places under the table, on the line that says how many runs did not finish. The panel hands
it the ticked runs' curves (``show_runs``) as its loader reads them; grouping,
interpolating and bootstrapping (``core.results.group_curves``: up to ~0.5 s per group of 5 long seeds for the IQM) run
on the window's pool (``run_in_background``), and only the newest request's answer is drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QWidget

from app.plots.overlay import OverlayPlot
from app.threads.background import run_in_background
from core.results.curves import RewardCurve
from core.results.group_curves import GroupCurve, Statistic, XMode, group_curves
from core.results.grouping import GroupBy

GROUP_BYS: dict[str, GroupBy | None] = {"each run": None, "launch group": "group", "config": "config"}
STATISTICS = {"mean": "mean", "IQM": "iqm"}


class CurveModeControls(QWidget):
    """Draws the ticked runs on ``plot`` as each run's curve or as one aggregate per group."""

    drawn = Signal()  # the plot shows the latest choice (tests and the screenshot wait on it)
    grouping_changed = Signal()  # "Seeds" changed: the table's rows follow it

    def __init__(self, plot: OverlayPlot, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot = plot
        self._paths: list[Path] = []
        self._curves: list[RewardCurve] = []
        self._request = self._drawn = 0
        self.by_combo = QComboBox()
        for text, by in GROUP_BYS.items():
            self.by_combo.addItem(text, by)
        self.by_combo.setToolTip("Each run on its own, or one curve and one table row per group of seeds: launch group, "
                                 "the seeds launched together (--seeds); config, every run of the same settings but the "
                                 "seed. A group's row has mean ± std. error, 95% CI, IQM and the test against the "
                                 "baseline's group")
        self.mode_combo = QComboBox()
        for text, statistic in STATISTICS.items():
            self.mode_combo.addItem(text, statistic)
        self.mode_combo.setToolTip("A group's curve: the mean or the IQM (the mean of the middle half of the seeds) of its "
                                   "seeds, interpolated to a common step grid, with a 95 % bootstrap confidence band")
        self.seeds_box = QCheckBox("Each seed")
        self.seeds_box.setToolTip("Draw each seed thin and faint behind its group's curve")
        self.unfinished_box = QCheckBox("Count unfinished")  # the panel puts it on its status line, which says how many
        self.unfinished_box.setToolTip("Count the seeds that did not finish (crashed, stopped, failed; the table: also "
                                       "still running) in their group's curve and statistics. Off: they are left out, "
                                       "and the table's Left out column lists them")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        for w in (QLabel("Seeds"), self.by_combo, QLabel("Curve"), self.mode_combo, self.seeds_box):
            layout.addWidget(w)
        layout.addStretch(1)
        self.mode_combo.currentIndexChanged.connect(lambda _i: self.redraw())
        self.by_combo.currentIndexChanged.connect(lambda _i: self._grouping())
        self.seeds_box.toggled.connect(lambda _on: self._seeds_toggled())
        self.unfinished_box.toggled.connect(lambda _on: self._grouping())
        plot.x_mode_changed.connect(lambda _mode: self.redraw())
        self._enable()

    # --- choices ----------------------------------------------------------------------------------

    def by(self) -> GroupBy | None:
        """``group`` or ``config``: what makes a group of seeds; None: each run on its own."""
        return GROUP_BYS[self.by_combo.currentText()]

    def include_unfinished(self) -> bool:
        """Count the seeds that did not finish in their group (else left out and listed)."""
        return self.unfinished_box.isChecked()

    def statistic(self) -> Statistic | None:
        """``mean`` or ``iqm`` per group; None: each run's curve."""
        return self.mode_combo.currentData() if self.by() is not None else None

    def set_mode(self, statistic: str | None, by: str = "group", show_seeds: bool | None = None) -> None:
        """Choose as a user would: ``statistic`` None (each run), ``mean`` or ``iqm``; ``by`` group or config."""
        if show_seeds is not None:
            self.seeds_box.setChecked(show_seeds)
        if statistic is not None:
            self.mode_combo.blockSignals(True)
            self.mode_combo.setCurrentIndex(self.mode_combo.findData(statistic))
            self.mode_combo.blockSignals(False)
        self.by_combo.setCurrentIndex(self.by_combo.findData(by if statistic is not None else None))
        self.redraw()

    def _grouping(self) -> None:
        self.grouping_changed.emit()
        self.redraw()

    @property
    def computing(self) -> bool:
        """Grouped curves for the latest choice are still being computed."""
        return self._drawn != self._request

    def _enable(self) -> None:
        grouped = self.by() is not None
        self.mode_combo.setEnabled(grouped)
        self.seeds_box.setEnabled(grouped)
        self.unfinished_box.setEnabled(grouped)

    # --- drawing ----------------------------------------------------------------------------------

    def show_runs(self, paths: list[Path], curves: list[RewardCurve]) -> None:
        """The ticked runs (their folders and curves, in the list's order), as the panel's loader read them."""
        self._paths, self._curves = list(paths), list(curves)
        self.redraw()

    def redraw(self) -> None:
        self._enable()
        self._request += 1
        statistic = self.statistic()
        if statistic is None or not self._paths:
            self.plot.set_curves(self._curves)
            self._done(self._request)
            return
        request, by, x_mode = self._request, self.by_combo.currentData(), cast(XMode, self.plot.x_mode)
        unfinished = self.include_unfinished()
        paths, curves = list(self._paths), dict(zip(self._paths, self._curves, strict=True))
        if not self.plot.grouped():
            self.plot.set_groups([], computing=True)  # not the runs' own curves under a grouped title meanwhile
        run_in_background(lambda: group_curves(paths, curves, by, statistic, x_mode, unfinished),
                          lambda groups: self._answer(request, groups),
                          lambda message: self._failed(request, message))

    def _answer(self, request: int, groups: list[GroupCurve]) -> None:
        if request != self._request:
            return  # the choice or the ticks changed since: a newer answer is coming
        self.plot.set_groups(groups, self.seeds_box.isChecked())
        self._done(request)

    def _failed(self, request: int, message: str) -> None:
        if request != self._request:
            return
        self.plot.set_groups([])
        self.plot.set_message(f"Could not average the seeds: {message}")
        self._done(request)

    def _seeds_toggled(self) -> None:
        if self.plot.grouped() and not self.computing:  # nothing to compute again: draw the same groups
            self.plot.set_groups(self.plot.groups(), self.seeds_box.isChecked())

    def _done(self, request: int) -> None:
        self._drawn = request
        self.drawn.emit()
