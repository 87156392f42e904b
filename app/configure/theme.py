"""Colours that read on both light and dark palettes, picked from the widget's own palette."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget


def is_dark(widget: QWidget) -> bool:
    return widget.palette().color(QPalette.ColorRole.Window).lightness() < 128


def error_color(widget: QWidget) -> QColor:
    return QColor("#ff6b6b") if is_dark(widget) else QColor("#c62828")


def verdict_color(widget: QWidget, verdict: str | None) -> QColor:
    """Green / amber / red for fits / tight / does not fit; a muted text colour when unknown."""
    dark = is_dark(widget)
    colors = {"fits": ("#2e7d32", "#66bb6a"), "tight": ("#b26a00", "#ffb74d"), "does not fit": ("#c62828", "#ff6b6b")}
    if verdict not in colors:
        return widget.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
    return QColor(colors[verdict][1 if dark else 0])


# Okabe-Ito colours: distinguishable with colour-blindness and on light and dark backgrounds.
SEGMENT_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"]


def segment_color(index: int) -> QColor:
    return QColor(SEGMENT_COLORS[index % len(SEGMENT_COLORS)])
