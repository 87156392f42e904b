"""Light and dark theme that follow the system colour scheme (Qt 6.5+ ``QStyleHints``).

The Qt palette and pyqtgraph's background/foreground change together, so plots never stay
white in a dark window.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QWidget

DARK = {"window": "#202124", "base": "#17181a", "alt": "#26282b", "text": "#e3e3e3", "button": "#2d2f33",
        "highlight": "#3d7bd9", "disabled": "#7a7a7a", "plot_bg": "#17181a", "plot_fg": "#c8c8c8",
        "mid": "#80858c"}
LIGHT = {"window": "#f3f3f3", "base": "#ffffff", "alt": "#f6f6f6", "text": "#1d1d1d", "button": "#e9e9e9",
         "highlight": "#2f6fd0", "disabled": "#9a9a9a", "plot_bg": "#ffffff", "plot_fg": "#303030"}

# Curve colours readable on both backgrounds.
# a run's state wherever it is listed (Runs, Results)
STATE_COLORS = {"running": "#3fa34d", "starting": "#3fa34d", "queued": "#8a8a8a", "stopping": "#c9a227",
                "finished": "#3d8ee8", "stopped": "#c9a227", "failed": "#d84a6a", "crashed": "#d84a6a"}
SERIES_COLORS = ["#3d8ee8", "#e8883d", "#4caf50", "#d84a6a", "#9c6ade", "#c9a227", "#26a69a", "#8d6e63"]


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def palette_for(dark: bool) -> QPalette:
    c = DARK if dark else LIGHT
    pal = QPalette()
    role = QPalette.ColorRole
    pal.setColor(role.Window, QColor(c["window"]))
    pal.setColor(role.WindowText, QColor(c["text"]))
    pal.setColor(role.Base, QColor(c["base"]))
    pal.setColor(role.AlternateBase, QColor(c["alt"]))
    pal.setColor(role.Text, QColor(c["text"]))
    pal.setColor(role.Button, QColor(c["button"]))
    pal.setColor(role.ButtonText, QColor(c["text"]))
    pal.setColor(role.ToolTipBase, QColor(c["alt"]))
    pal.setColor(role.ToolTipText, QColor(c["text"]))
    pal.setColor(role.Highlight, QColor(c["highlight"]))
    pal.setColor(role.HighlightedText, QColor("#ffffff"))
    pal.setColor(role.PlaceholderText, QColor(c["disabled"]))
    pal.setColor(role.Link, QColor(c["highlight"]))
    if "mid" in c:  # the dark outline IndicatorStyle draws; light keeps Qt's own
        pal.setColor(role.Mid, QColor(c["mid"]))
    for r in (role.WindowText, role.Text, role.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, r, QColor(c["disabled"]))
    return pal


class IndicatorStyle(QProxyStyle):
    """Fusion, with check box and radio button outlines that show on a dark palette.

    Fusion draws an indicator's outline as the window colour made 40% darker: on a dark window
    that is near black on a near-black box, so an unchecked box is invisible. On a dark palette
    this style strokes the indicator again with the palette's ``Mid`` colour.
    """

    _KINDS = (QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorRadioButton,
              QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck)

    def drawPrimitive(self, element, option: QStyleOption, painter: QPainter, widget: QWidget | None = None) -> None:  # noqa: N802 (Qt API)
        super().drawPrimitive(element, option, painter, widget)
        pal = option.palette
        if element not in self._KINDS or pal.color(QPalette.ColorRole.Window).lightness() >= 128:
            return
        color = QColor(pal.color(QPalette.ColorRole.Mid))
        if not option.state & QStyle.StateFlag.State_Enabled:
            color.setAlpha(110)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(color)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        r = option.rect.adjusted(0, 0, -1, -1)
        if element == QStyle.PrimitiveElement.PE_IndicatorRadioButton:
            painter.drawEllipse(r.adjusted(1, 1, -1, -1))
        else:
            painter.drawRoundedRect(r, 1.5, 1.5)
        painter.restore()


_STYLE: IndicatorStyle | None = None  # the app's style must outlive every widget


def plot_colors(dark: bool | None = None) -> tuple[str, str]:
    """(background, foreground) for pyqtgraph in the current theme."""
    dark = system_is_dark() if dark is None else dark
    c = DARK if dark else LIGHT
    return c["plot_bg"], c["plot_fg"]


def apply_theme(app: QApplication, dark: bool | None = None) -> bool:
    """Style the whole app for ``dark`` (default: the system's scheme); returns the choice."""
    dark = system_is_dark() if dark is None else dark
    global _STYLE
    if _STYLE is None:
        _STYLE = IndicatorStyle("Fusion")
        app.setStyle(_STYLE)
    app.setPalette(palette_for(dark))
    bg, fg = plot_colors(dark)
    pg.setConfigOptions(background=bg, foreground=fg, antialias=False)
    return dark
