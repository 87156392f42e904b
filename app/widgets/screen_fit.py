"""A window's size asked for, cut to the screen it opens on.

A dialog sized in pixels for a desktop monitor (1100x700) is taller than a 1280x720 laptop screen (1920x1080 at
150 %) once the title bar is counted, and its bottom row, the buttons, falls off the screen. ``fit_to_screen``
gives it the size it asks for where that fits, else the screen's available size less the title bar.
"""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

FRAME_ALLOWANCE = 32  # the title bar the window manager adds (about 31 logical pixels on Windows 10 and 11)


def fit_to_screen(widget: QWidget, width: int, height: int) -> None:
    """Resize ``widget`` to ``width`` x ``height``, never larger than its screen's available geometry (the
    primary screen's before it is shown). Where it goes is Qt's: a dialog is centred on its parent and kept on
    the screen when shown (moving it here would stop that)."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    if screen is None:  # no screen at all: nothing to fit
        widget.resize(width, height)
        return
    avail = screen.availableGeometry()
    widget.resize(min(width, avail.width()), min(height, avail.height() - FRAME_ALLOWANCE))
