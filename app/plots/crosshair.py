"""The crosshair of a plot: a vertical line and a readout of the values under the mouse.

It follows the mouse over the plot (rate-limited, so a fast mouse does not redraw the plot a
thousand times a second) and hides when the mouse leaves the plot, when the data is cleared and
when another run is shown: a readout never names values that are not on screen.
"""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QLabel

RATE_HZ = 30


class Crosshair:
    def __init__(self, plot: pg.PlotWidget, text_at: Callable[[float], str]):
        self._plot = plot
        self._text_at = text_at
        item = plot.getPlotItem()
        self.line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen((128, 128, 128, 160), width=1))
        self.line.setVisible(False)
        item.addItem(self.line, ignoreBounds=True)
        self.label = QLabel(plot)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.label.setStyleSheet("QLabel { background: rgba(40,40,40,170); color: white; padding: 2px 4px; font-size: 8pt; }")
        self.label.hide()
        self._moves = 0  # mouse moves seen; a rate-limited move older than the last hide() is dropped
        self._hidden_at = 0
        plot.scene().sigMouseMoved.connect(self._count)
        self._proxy = pg.SignalProxy(plot.scene().sigMouseMoved, rateLimit=RATE_HZ, slot=self._on_moved)

    def visible(self) -> bool:
        return self.label.isVisibleTo(self._plot) or self.line.isVisible()

    def hide(self) -> None:
        self._hidden_at = self._moves
        self.line.setVisible(False)
        self.label.hide()

    def _count(self, _pos: QPointF) -> None:
        self._moves += 1

    def _on_moved(self, event: tuple[QPointF]) -> None:
        if self._moves <= self._hidden_at:
            return  # the mouse left (or the run changed) after this move
        pos = event[0]
        vb = self._plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(pos):
            self.hide()
            return
        self.show_at(vb.mapSceneToView(pos).x())

    def show_at(self, x: float) -> None:
        self.line.setPos(x)
        self.line.setVisible(True)
        self.label.setText(self._text_at(x))
        self.label.adjustSize()
        self.label.move(max(0, self._plot.width() - self.label.width() - 6), 4)
        self.label.show()
        self.label.raise_()
