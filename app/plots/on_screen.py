"""Which part of a widget is on screen, with its ancestors' parts kept for the next widget asked.

A plot asks before it draws (``LivePlot.in_view``); the Monitor's redraw asks for up to 11 plots
that share most of their ancestors (the splitter, the chart grid's scroll area, the tab, the
window). Walking each plot's ancestors on its own was ~0.15 ms a plot, a few percent of a frame;
with a ``Clip`` kept for the frame, each ancestor's part is found once.
"""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QWidget


class Clip:
    """The shown part of widgets, in each one's own coordinates; keep one only while nothing moves
    (one redraw pass), since a scroll, a resize or a tab change makes it stale."""

    def __init__(self) -> None:
        self._shown: dict[int, QRect] = {}

    def shown(self, widget: QWidget) -> QRect:
        """The part of ``widget``'s rectangle that each parent's rectangle leaves (empty: none)."""
        key = id(widget)
        rect = self._shown.get(key)
        if rect is None:
            rect = widget.rect()
            parent = None if widget.isWindow() else widget.parentWidget()
            if parent is not None:
                rect = rect.intersected(self.shown(parent).translated(-widget.pos()))
            self._shown[key] = rect
        return rect


def in_view(widget: QWidget, clip: Clip | None = None) -> bool:
    """Some of ``widget`` is on screen: shown, in a shown tab, not scrolled out of its scroll area,
    its window not minimized. (Each parent's rectangle clips it: ``visibleRegion()`` is empty in a
    window the platform has not exposed, offscreen ones included.)"""
    if not widget.isVisible() or widget.window().isMinimized():
        return False
    return not (clip or Clip()).shown(widget).isEmpty()
