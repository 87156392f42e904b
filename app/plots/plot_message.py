"""A message shown over a plot instead of data ("no GPU data: ...", "tick runs to compare").

Empty axes behind a message read as data (0..1 ticks), so they are hidden while it shows.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel


class PlotMessage(QObject):
    """A centred label over ``plot`` that follows its size; ``set_text(None)`` hides it."""

    def __init__(self, plot: pg.PlotWidget):
        super().__init__(plot)
        self._plot = plot
        self.label = QLabel(plot)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setWordWrap(True)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.label.setStyleSheet("QLabel { color: palette(text); background: palette(base); padding: 6px; font-size: 9pt; }")
        self.label.hide()
        self._placed = False
        plot.installEventFilter(self)

    def set_text(self, text: str | None) -> None:
        if (text or None) == self.text() and self._placed:
            return  # unchanged: showing the axes again would re-render them for nothing
        self._placed = True
        self.label.setText(text or "")
        self.label.setVisible(bool(text))
        item = self._plot.getPlotItem()
        for side in ("left", "bottom"):
            item.showAxis(side, show=not text)
        item.showGrid(x=not text, y=not text, alpha=0.25)
        self._place()

    def text(self) -> str | None:
        return self.label.text() if self.label.isVisibleTo(self._plot) else None

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        # a plot being deleted (a run's scalar chart) may still send events after its Python side is gone
        if event.type() == QEvent.Type.Resize and obj is getattr(self, "_plot", None):
            self._place()
        return False

    def _place(self) -> None:
        """The middle 40 % of the plot's height, or as much as the wrapped text needs (up to the whole): a short
        plot (the idle GPU monitor's four on a laptop screen) gave "No GPU data: NVML shared library not found"
        56 px of its 68."""
        w, h = self._plot.width(), self._plot.height()
        width = int(w * 0.8)
        need = self.label.heightForWidth(width) if self.label.text() else 0
        height = min(h, max(int(h * 0.4), need))
        self.label.setGeometry(int(w * 0.1), (h - height) // 2, width, height)
        self.label.raise_()
