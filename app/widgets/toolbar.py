"""A panel's row of controls that never cuts a word: what does not fit goes behind » (Qt's own overflow).

``panel_toolbar(items)`` lays the items out left to right; ``STRETCH`` pushes what follows to the right. When
the panel is narrower than the row, Qt moves the last items into the » menu, whole, instead of squeezing them.
Put the less-used actions last.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QSizePolicy, QToolBar, QToolButton, QWidget

STRETCH = "stretch"
SEPARATOR = "separator"
MORE_TIP = "More: the controls this row has no room for"


def panel_toolbar(name: str, items: Iterable[QWidget | QAction | str]) -> QToolBar:
    bar = QToolBar(name)
    bar.setObjectName(name)
    bar.setMovable(False)
    bar.setFloatable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    bar.setIconSize(QSize(16, 16))
    bar.setContentsMargins(0, 0, 0, 0)
    bar.setStyleSheet("QToolBar { border: none; spacing: 4px; }")
    for item in items:
        if item == STRETCH:
            spacer = QWidget()
            spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
            bar.addWidget(spacer)
        elif item == SEPARATOR:
            bar.addSeparator()
        elif isinstance(item, QAction):
            bar.addAction(item)
        elif isinstance(item, QWidget):
            bar.addWidget(item)
    more = bar.findChild(QToolButton, "qt_toolbar_ext_button")
    if more is not None:
        more.setToolTip(MORE_TIP)
    return bar
