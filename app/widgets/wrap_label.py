"""A word-wrapped label that asks its layout for the height its lines need at its width; ``wrap_long_words``, for a
wrapped label whose text holds a path or a name, asks for a few characters' width rather than its longest word's.

Qt's layouts do not always give a wrapped label the height ``heightForWidth`` says (a grid inside a group
box inside a scroll area gave "SAC needs a continuous (Box) action space; ..." 46 px of its 56): this one
sets that height as its minimum whenever its width or text changes.
"""

from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

from app.widgets.elided_label import MIN_CHARS


def wrap_long_words(label: QLabel) -> QLabel:
    """Word-wrap a label whose text may hold a path or a name (a user's, a machine's), at a least width of a few
    characters rather than its longest word's.

    Qt wraps at spaces and after "/", so a Windows path or a name with underscores is one word to it, and a wrapped
    QLabel asks its layout for that word's width: "Wrote the table to C:\\Users\\..." made the tab, and with it
    the window, as wide as the path. Past this least width such a word is cut at the label's edge; the text
    stays whole in ``text()`` (and selectable where the label is)."""
    label.setWordWrap(True)
    label.setMinimumWidth(label.fontMetrics().horizontalAdvance("x" * MIN_CHARS))
    return label


class WrapLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(text, parent)
        self.setWordWrap(True)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        super().setText(text)
        self._fit_height()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit_height()

    def _fit_height(self) -> None:
        need = self.heightForWidth(self.width()) if self.width() > 0 else -1
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)
