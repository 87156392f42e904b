"""A panel's row of controls that never cuts a word: what does not fit goes behind », whole, and » offers it.

``panel_toolbar(name, items)`` lays the items out left to right; ``STRETCH`` pushes what follows to the right, and
``Labelled("CO2", box)`` keeps a caption (and a readout such as the smoothing's value) with its control. When the panel
is narrower than the row, Qt moves the last items into the » menu, whole, instead of squeezing them; each control goes
there in its menu form (``app.widgets.toolbar_items``: a button as an entry, a combo box as a submenu, a spin box or
slider as a twin box), so every control stays in reach. Put the less-used actions last.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolBar, QToolButton, QWidget

from app.widgets.toolbar_items import ControlAction

STRETCH = "stretch"
SEPARATOR = "separator"
MORE_TIP = "More: the controls this row has no room for"
MORE_BUTTON = "qt_toolbar_ext_button"  # Qt's name for the » button


@dataclass(frozen=True)
class Labelled:
    """A control with its caption in front (and a readout after it): in the row and behind », never apart."""

    caption: str
    control: QWidget
    readout: QLabel | None = None


def panel_toolbar(name: str, items: Iterable[QWidget | Labelled | QAction | str]) -> QToolBar:
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
            bar.addWidget(spacer)  # nothing to offer: Qt leaves a plain widget out of »
        elif item == SEPARATOR:
            bar.addSeparator()
        elif isinstance(item, QAction):
            bar.addAction(item)
        elif isinstance(item, Labelled):
            bar.addAction(ControlAction(item.control, bar, caption=item.caption, row=labelled_row(item),
                                        readout=item.readout))
        elif isinstance(item, QWidget):
            bar.addAction(ControlAction(item, bar))
    more = more_button(bar)
    if more is not None:
        more.setToolTip(MORE_TIP)
        menu = more.menu()  # Qt's own, made with the bar; a row of a panel never moves into a main window's toolbar area
        if menu is not None:
            menu.setToolTipsVisible(True)  # the entries' tooltips say what the controls do, as in the row
            menu.aboutToShow.connect(lambda: refresh_entries(bar))
    return bar


def more_button(bar: QToolBar) -> QToolButton | None:
    """The row's » button (shown only while something has no room)."""
    return bar.findChild(QToolButton, MORE_BUTTON)


def refresh_entries(bar: QToolBar) -> None:
    """Bring every entry of » up to date with its control (enabled, text, checked)."""
    for action in bar.actions():
        if isinstance(action, ControlAction):
            action.refresh()


def labelled_row(item: Labelled) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)  # as the bar's own spacing: the row looks as when caption and box were items of their own
    caption = QLabel(item.caption)
    caption.setBuddy(item.control)
    layout.addWidget(caption)
    layout.addWidget(item.control)
    if item.readout is not None:
        layout.addWidget(item.readout)
    return row
