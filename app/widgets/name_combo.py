"""A combo box of names that come from the user, the machine or the install (an env id, a tag, a GPU, a sweep):
its width never follows its items, so no such name sets the window's width.

A plain ``QComboBox`` asks for its longest item: the plain install's note on sb3-contrib made the window 1673 px
wide on a 1280 px screen (issue 41). This one asks room for ``chars`` characters; its popup still shows each
item whole, and a current name longer than its room is drawn shortened in the middle ("night…shaping", Qt itself
would cut its end) with the whole name in the tooltip, as ``ElidedLabel`` does.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPaintEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QStylePainter, QWidget


class NameCombo(QComboBox):
    def __init__(self, chars: int, parent: QWidget | None = None):
        super().__init__(parent)
        self._own_tip = ""
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(chars)
        self.setProperty("elided", True)  # tests/app/layout/clipping.py: eliding is this combo's way to fit
        self.currentTextChanged.connect(lambda _text: self._update_tip())

    def setToolTip(self, tip: str) -> None:  # noqa: N802 (Qt's name)
        self._own_tip = tip
        self._update_tip()

    def is_elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.currentText()) > self._text_room(self._option()).width()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._update_tip()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        """QComboBox.paintEvent, with the current text elided to its room."""
        painter = QStylePainter(self)
        painter.setPen(self.palette().color(QPalette.ColorRole.Text))
        option = self._option()
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        option.currentText = self.fontMetrics().elidedText(option.currentText, Qt.TextElideMode.ElideMiddle,
                                                           self._text_room(option).width())
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def _option(self) -> QStyleOptionComboBox:
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        return option

    def _text_room(self, option: QStyleOptionComboBox) -> QRect:
        room = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                           QStyle.SubControl.SC_ComboBoxEditField, self).adjusted(1, 0, -1, 0)
        if not option.currentIcon.isNull():
            room.setLeft(room.left() + option.iconSize.width() + 4)
        return room

    def _update_tip(self) -> None:
        tip = "\n".join(t for t in (self.currentText() if self.is_elided() else "", self._own_tip) if t)
        if tip != super().toolTip():
            super().setToolTip(tip)
