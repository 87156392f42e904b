"""A list of wrapped messages (errors to click) exactly as tall as its lines, up to a limit, at any width."""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QListWidget, QWidget


class FitList(QListWidget):
    """Its height follows its wrapped lines whenever its items or its width change (a narrow column wraps more)."""

    def __init__(self, max_height: int = 120, parent: QWidget | None = None):
        super().__init__(parent)
        self.max_height = max_height
        self.setWordWrap(True)

    def fit_height(self) -> None:
        if not self.count():
            return
        self.doItemsLayout()  # the rows wrapped at this width
        rows = sum(self.visualItemRect(self.item(i)).height() for i in range(self.count()))  # wrapped rows
        height = min(rows + 2 * self.frameWidth() + 4, self.max_height)
        if height != self.height() or self.minimumHeight() != height:
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.fit_height()
