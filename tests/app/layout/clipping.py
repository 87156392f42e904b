"""Find every word a window cuts: a button, tab, combo, check box, field or plain label whose text is wider
(or taller) than its room, a widget that its parents cut sideways, a scrolled form wider than its view, and a
chart shown less than ``MIN_CHART_PX`` high.

``findings(root)`` walks the visible widgets under ``root`` and returns one line per problem, naming the
widget by its text and the path of its parents' object names or classes, e.g.
``QPushButton 'Export table…' 39 px for 92 px of text (ResultsPanel > QWidget)``.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QProgressBar,
    QRadioButton,
    QScrollArea,
    QStyle,
    QTabBar,
    QToolButton,
    QWidget,
)

SLACK = 1       # pixels of rounding a text may overrun its room by
BUTTON_PAD = 6  # the least a push or tool button keeps either side of its text, in all styles we ship
COMBO_ROOM = 24  # a combo's arrow and frame
FIELD_PAD = 6   # a line edit's or spin box's frame and text margins
MIN_CHART_PX = 100  # the least of a chart's height shown: its title, three ticks and the x axis (issue 42)


def findings(root: QWidget) -> list[str]:
    found: list[str] = []
    screen = root.screen().availableGeometry() if root.isWindow() and root.screen() else None
    if screen is not None and (root.width() > screen.width() or root.height() > screen.height()):
        found.append(f"{_name(root)} is {root.width()}x{root.height()}, the screen has {screen.width()}x{screen.height()}")
    cut: set[QWidget] = set()  # a widget cut with its parent is not named again
    for widget in [root, *root.findChildren(QWidget)]:
        if not widget.isVisible() or widget.width() <= 0 or widget.window().isHidden() or _inside(widget, cut):
            continue
        problem = (_text_problem(widget) or _cut_problem(widget) or _overlap_problem(widget) or _scroll_problem(widget)
                   or _chart_problem(widget))
        if problem:
            cut.add(widget)
            found.append(f"{problem} ({_where(widget)})")
    return found


def _inside(widget: QWidget, cut: set[QWidget]) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if parent in cut:
            return True
        parent = parent.parentWidget()
    return False


def _text(widget: QWidget) -> str:
    if isinstance(widget, QAbstractButton):
        return widget.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    if isinstance(widget, QLabel):
        return widget.text()
    if isinstance(widget, QComboBox):
        return widget.currentText()
    if isinstance(widget, QAbstractSpinBox):
        return widget.lineEdit().text() if widget.lineEdit() else ""
    if isinstance(widget, QLineEdit):
        return widget.text()
    if isinstance(widget, QGroupBox):
        return widget.title()
    if isinstance(widget, QProgressBar):
        return widget.text() if widget.isTextVisible() else ""
    return ""


def _name(widget: QWidget) -> str:
    text = _text(widget).replace("\n", " ")
    text = text if len(text) <= 40 else text[:39] + "…"
    return f"{type(widget).__name__} {text!r}" if text else type(widget).__name__


def _where(widget: QWidget) -> str:
    names = []
    parent = widget.parentWidget()
    while parent is not None and len(names) < 4:
        names.append(parent.objectName() or type(parent).__name__)
        parent = parent.parentWidget()
    return " < ".join(names) or "top"


def _text_problem(widget: QWidget) -> str | None:
    if isinstance(widget, QTabBar):
        return _tab_problem(widget)
    text = _text(widget)
    # a NameCombo shortens a long name in its middle on purpose, whole in its tooltip (as an ElidedLabel does)
    if not text or isinstance(widget, QComboBox) and widget.property("elided") or isinstance(
            widget, QLineEdit) and widget.parentWidget() and isinstance(widget.parentWidget(), (QAbstractSpinBox, QComboBox)):
        return None
    metrics = widget.fontMetrics()
    if isinstance(widget, QLabel):
        return _label_problem(widget)
    need = max(metrics.horizontalAdvance(line) for line in text.splitlines() or [text])
    if isinstance(widget, (QCheckBox, QRadioButton)):
        style = widget.style()
        need += style.pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth, None, widget) + style.pixelMetric(
            QStyle.PixelMetric.PM_CheckBoxLabelSpacing, None, widget)
    elif isinstance(widget, QAbstractButton):
        if not widget.icon().isNull():
            need += widget.iconSize().width() + 4
        need += 2 * BUTTON_PAD + (4 if isinstance(widget, QToolButton) and widget.menu() else 0)
    elif isinstance(widget, QComboBox):
        need += COMBO_ROOM
    elif isinstance(widget, QAbstractSpinBox):
        need += COMBO_ROOM  # the arrows
    elif isinstance(widget, QLineEdit):
        if widget.hasFocus() or len(text) > 40:  # a long path scrolls in its field by design
            return None
        need += FIELD_PAD
    elif isinstance(widget, QGroupBox):
        need += 12
    elif isinstance(widget, QProgressBar):
        need += 8
    else:
        return None
    if widget.width() + SLACK < need:
        return f"{_name(widget)} {widget.width()} px for {need} px of text"
    if not isinstance(widget, QGroupBox) and widget.height() + SLACK < metrics.height():
        return f"{_name(widget)} {widget.height()} px high for {metrics.height()} px of text"
    return None


def _label_problem(label: QLabel) -> str | None:
    text = label.text()
    if label.pixmap() is not None and not label.pixmap().isNull() or label.property("elided"):
        return None  # a picture; or a label that elides on purpose, the whole text in its tooltip
    room = label.contentsRect()
    rich = label.textFormat() == Qt.TextFormat.RichText or (
        label.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text))
    if label.wordWrap() or rich:
        hint = label.heightForWidth(label.width()) if label.wordWrap() else label.sizeHint().height()
        if hint > label.height() + SLACK:
            return f"{_name(label)} {label.height()} px high for {hint} px of wrapped text"
        if rich and not label.wordWrap() and label.sizeHint().width() > label.width() + SLACK:
            return f"{_name(label)} {label.width()} px for {label.sizeHint().width()} px of text"
        return None
    metrics = label.fontMetrics()
    lines = text.splitlines() or [text]
    need = max(metrics.horizontalAdvance(line) for line in lines)
    if room.width() + SLACK < need:
        return f"{_name(label)} {room.width()} px for {need} px of text"
    if room.height() + SLACK < metrics.height() * len(lines):
        return f"{_name(label)} {room.height()} px high for {metrics.height() * len(lines)} px of text"
    return None


def _tab_problem(bar: QTabBar) -> str | None:
    metrics = bar.fontMetrics()
    for i in range(bar.count()):
        text = bar.tabText(i).replace("&", "")
        rect = bar.tabRect(i)
        need = metrics.horizontalAdvance(text) + 8
        if not bar.isTabVisible(i):
            continue
        if rect.width() < need or not bar.rect().contains(rect):
            return f"tab {text!r} {rect.width()} px for {need} px of text, or scrolled out of its bar"
    return None


def _cut_problem(widget: QWidget) -> str | None:
    """A widget its parents show only in part: cut sideways anywhere, or up/down outside a scrolled view."""
    if not _checked(widget):
        return None
    parent = widget.parentWidget()
    while parent is not None:
        rect = QRect(widget.mapTo(parent, QPoint(0, 0)), widget.size())
        shown = rect.intersected(parent.rect())
        scroll = parent.parentWidget()
        if isinstance(scroll, QAbstractScrollArea) and parent is scroll.viewport():
            # a scrolled form: only a sideways cut counts (rows above or below the view are scrolled away)
            seen = min(rect.right(), parent.rect().right()) - max(rect.left(), 0) + 1
            if seen + SLACK < rect.width():
                return f"{_name(widget)} cut sideways by a scrolled view ({seen} of {rect.width()} px)"
            return None
        if shown.width() + SLACK < rect.width() or shown.height() + SLACK < rect.height():
            where = parent.objectName() or type(parent).__name__
            return f"{_name(widget)} shown {shown.width()}x{shown.height()} of {rect.width()}x{rect.height()} px: {where} cuts it"
        if parent.isWindow():
            return None
        parent = parent.parentWidget()
    return None


def _overlap_problem(widget: QWidget) -> str | None:
    """A widget drawn over a sibling with text (a unit label under a squeezed field, two fit bar rows on top of
    each other)."""
    parent = widget.parentWidget()
    if not _checked(widget) or parent is None or widget.isWindow():
        return None
    rect = widget.geometry()
    for sibling in parent.children():
        if sibling is widget or not isinstance(sibling, QWidget) or sibling.isWindow() or not sibling.isVisible():
            continue
        if not _checked(sibling) or sibling.geometry().isEmpty():
            continue
        both = rect.intersected(sibling.geometry())
        if both.width() > SLACK + 1 and both.height() > SLACK + 1:
            return f"{_name(widget)} overlaps {_name(sibling)} by {both.width()}x{both.height()} px"
    return None


def _checked(widget: QWidget) -> bool:
    return bool(_text(widget)) and isinstance(widget, (QAbstractButton, QLabel, QComboBox, QAbstractSpinBox,
                                                          QLineEdit, QGroupBox, QProgressBar))


def _scroll_problem(widget: QWidget) -> str | None:
    if not isinstance(widget, QScrollArea) or widget.widget() is None:
        return None
    content, view = widget.widget(), widget.viewport()
    need = max(content.minimumSizeHint().width(), content.minimumWidth(), content.width() if not widget.widgetResizable() else 0)
    if need > view.width() + SLACK:
        return f"{_name(widget)}: its content needs {need} px, its view has {view.width()} px (a sideways scroll)"
    if widget.horizontalScrollBar().maximum() > 0:
        return f"{_name(widget)}: scrolls sideways by {widget.horizontalScrollBar().maximum()} px"
    return None


def _chart_problem(widget: QWidget) -> str | None:
    """A chart (a pyqtgraph view) of which less than ``MIN_CHART_PX`` rows show: one that short, or one its parents
    cut (a row of a scrolled grid half in view). A chart scrolled wholly out of view is not shown, so not counted."""
    if not isinstance(widget, pg.GraphicsView):
        return None
    top, bottom = 0, widget.height()
    parent, child = widget.parentWidget(), widget
    offset = 0
    while parent is not None:
        offset += child.y()
        top, bottom = max(top, -offset), min(bottom, parent.height() - offset)
        if parent.isWindow():
            break
        parent, child = parent.parentWidget(), parent
    shown = bottom - top
    if 0 < shown < MIN_CHART_PX:
        title = getattr(widget, "title", None)
        name = f"{type(widget).__name__} {title!r}" if isinstance(title, str) else type(widget).__name__
        return f"{name} shows {shown} px of its {widget.height()} (at least {MIN_CHART_PX})"
    return None
