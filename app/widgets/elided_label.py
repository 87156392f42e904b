"""A one-line label that shows what fits, ending in "…", with the whole text in its tooltip (a run's long name)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

MIN_CHARS = 12  # the least it shows before eliding: "20261126-17…"


class ElidedLabel(QLabel):
    """``text()`` stays the whole text; only the drawing is cut, and the tooltip then holds the whole."""

    def __init__(self, text: str = "", parent: QWidget | None = None, mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle):
        super().__init__(parent)
        self._own_tip = ""
        self._mode = mode  # the middle of a name gives way; a sentence's end (ElideRight)
        self.setProperty("elided", True)  # tests/app/layout/clipping.py: eliding is this label's way to fit
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)

    def setToolTip(self, tip: str) -> None:  # noqa: N802 (Qt's name)
        self._own_tip = tip
        self._update_tip()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        metrics = self.fontMetrics()
        return QSize(metrics.horizontalAdvance("x" * MIN_CHARS), super().minimumSizeHint().height())

    def is_elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self._update_tip()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._update_tip()

    def _update_tip(self) -> None:
        tip = "\n".join(t for t in (self.text() if self.is_elided() else "", self._own_tip) if t)
        if tip != super().toolTip():
            super().setToolTip(tip)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        room = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), self._mode, room.width())
        painter = QPainter(self)
        painter.setFont(self.font())
        painter.drawText(room, self.alignment() | Qt.AlignmentFlag.AlignVCenter, shown)
