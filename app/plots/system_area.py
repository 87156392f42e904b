"""The machine's plots laid out (``SystemPlots``): three a row; without GPU data the four GPU plots fold to one line
saying why, above the run's CPU and RAM.

Unfolded on a machine without an NVIDIA GPU, four plots each saying "No GPU data: NVML shared library not found" took
half a laptop's Monitor (two rows of 140 px), and the scalar charts beside them were left a strip of 68 px (issue 42).
Folded, the area is as tall as the line and one row (``folded``: the Monitor gives the rest to the charts); GPU
readings coming after all unfold it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QVBoxLayout, QWidget

from app.plots.system_plots import SystemPlots
from app.widgets.elided_label import ElidedLabel

COLUMNS = 3
QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum"


class SystemArea(QWidget):
    """``plots``' widgets in a grid, and the line the GPU plots fold to."""

    folded = Signal(bool)  # the GPU plots folded (True) or back (False)

    def __init__(self, plots: SystemPlots, parent: QWidget | None = None):
        super().__init__(parent)
        self.plots = plots
        self.note = ElidedLabel(mode=Qt.TextElideMode.ElideRight)  # one line however long NVML's reason
        self.note.setObjectName("gpuNote")
        self.note.setToolTip("The GPU plots (memory, temperature, utilization, power) come back when GPU readings do")
        self.note.hide()
        self._grid = QGridLayout()
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(4)
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(0, 0, 0, 0)
        self._column.setSpacing(4)
        self._column.addWidget(self.note)
        self._column.addLayout(self._grid, 1)
        self._folded: bool | None = None
        plots.on_note = self._set_note
        self._set_note(plots.gpu_note())

    def is_folded(self) -> bool:
        return bool(self._folded)

    def _set_note(self, note: str | None) -> None:
        folded = note is not None
        self.note.setText(note or "")
        if folded == self._folded:
            return
        self._folded = folded
        self.note.setVisible(folded)
        gpu = self.plots.gpu_widgets()
        for plot in gpu:
            plot.setVisible(not folded)
        while self._grid.count():
            self._grid.takeAt(0)
        shown = [p for p in self.plots.widgets() if not (folded and p in gpu)]
        for i, plot in enumerate(shown):
            self._grid.addWidget(plot, i // COLUMNS, i % COLUMNS)
        for column in range(COLUMNS):  # the columns in use share the width evenly (unstretched: 111, 265, 264 px)
            self._grid.setColumnStretch(column, 1 if column < min(COLUMNS, len(shown)) else 0)
        self._column.invalidate()
        # folded: exactly the line and the one row (the splitter gives the rest to the charts); else no bound
        self.setMaximumHeight(self._column.minimumSize().height() if folded else QWIDGETSIZE_MAX)
        self.folded.emit(folded)
