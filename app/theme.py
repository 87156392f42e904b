"""Light and dark theme that follow the system colour scheme (Qt 6.5+ ``QStyleHints``).

The Qt palette and pyqtgraph's background/foreground change together, so plots never stay
white in a dark window.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

DARK = {"window": "#202124", "base": "#17181a", "alt": "#26282b", "text": "#e3e3e3", "button": "#2d2f33",
        "highlight": "#3d7bd9", "disabled": "#7a7a7a", "plot_bg": "#17181a", "plot_fg": "#c8c8c8"}
LIGHT = {"window": "#f3f3f3", "base": "#ffffff", "alt": "#f6f6f6", "text": "#1d1d1d", "button": "#e9e9e9",
         "highlight": "#2f6fd0", "disabled": "#9a9a9a", "plot_bg": "#ffffff", "plot_fg": "#303030"}

# Curve colours readable on both backgrounds.
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
    for r in (role.WindowText, role.Text, role.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, r, QColor(c["disabled"]))
    return pal


def plot_colors(dark: bool | None = None) -> tuple[str, str]:
    """(background, foreground) for pyqtgraph in the current theme."""
    dark = system_is_dark() if dark is None else dark
    c = DARK if dark else LIGHT
    return c["plot_bg"], c["plot_fg"]


def apply_theme(app: QApplication, dark: bool | None = None) -> bool:
    """Style the whole app for ``dark`` (default: the system's scheme); returns the choice."""
    dark = system_is_dark() if dark is None else dark
    app.setStyle("Fusion")
    app.setPalette(palette_for(dark))
    bg, fg = plot_colors(dark)
    pg.setConfigOptions(background=bg, foreground=fg, antialias=False)
    return dark
