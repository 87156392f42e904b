"""The mouse wheel scrolls the form; it never changes a combo or spin box that does not have focus.

Qt's combo and spin boxes take wheel events under the pointer, so scrolling a long form changes
whatever value passes under the mouse (Activation auto -> silu, Vector env dummy -> subproc).
``guard_wheel(root)`` gives every such editor below ``root`` click/tab focus only and passes a
wheel event over an unfocused one to the scroll area it sits in.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QWidget

GUARDED = (QComboBox, QAbstractSpinBox)


class WheelGuard(QObject):
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if event.type() == QEvent.Type.Wheel and isinstance(obj, QWidget) and not obj.hasFocus():
            area = scroll_area_of(obj)
            if area is not None:  # the form scrolls as if the pointer were over its background
                QApplication.sendEvent(area.viewport(), event)
            return True  # the editor never sees it
        return False


def scroll_area_of(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


def guard_wheel(root: QWidget, guard: WheelGuard) -> None:
    """Guard every combo and spin box below ``root`` (call again after adding editors)."""
    for kind in GUARDED:
        for widget in root.findChildren(kind):
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            widget.removeEventFilter(guard)
            widget.installEventFilter(guard)
