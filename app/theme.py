"""Light and dark theme that follow the system colour scheme (Qt 6.5+ ``QStyleHints``), and every
colour the window uses.

The Qt palette and pyqtgraph's background/foreground change together, so plots never stay
white in a dark window. Colours that must read on both palettes come as (light, dark) pairs.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QWidget

DARK = {"window": "#202124", "base": "#17181a", "alt": "#26282b", "text": "#e3e3e3", "button": "#2d2f33",
        "highlight": "#3d7bd9", "disabled": "#7a7a7a", "plot_bg": "#17181a", "plot_fg": "#c8c8c8",
        "mid": "#80858c"}
LIGHT = {"window": "#f3f3f3", "base": "#ffffff", "alt": "#f6f6f6", "text": "#1d1d1d", "button": "#e9e9e9",
         "highlight": "#2f6fd0", "disabled": "#9a9a9a", "plot_bg": "#ffffff", "plot_fg": "#303030"}

# (light, dark) pairs for text and marks that must read on either palette
GREEN, BLUE, AMBER, RED = ("#2e7d32", "#66bb6a"), ("#1565c0", "#64b5f6"), ("#a15c00", "#ffb74d"), ("#c62828", "#ff6b6b")
VERDICT_COLORS = {"fits": GREEN, "tight": AMBER, "does not fit": RED}
QUEUE_STATUS_COLORS = {"launching": GREEN, "running": GREEN, "finished": BLUE, "stopped": AMBER, "cancelled": AMBER,
                       "skipped": AMBER, "cancelling": AMBER, "failed": RED, "crashed": RED, "finished with failures": RED}
# an rl_zoo3 entry's fate in the import report
ZOO_IMPORT_COLORS = {"imported": GREEN, "imported-with-drops": AMBER, "refused": RED}
# a run's state wherever it is listed (Runs, Results)
MUTED = "#8a8a8a"
STATE_COLORS = {"running": "#3fa34d", "starting": "#3fa34d", "queued": MUTED, "stopping": "#c9a227", "paused": "#e8883d",
                "stalled": "#e8883d",
                "finished": "#3d8ee8", "stopped": "#c9a227", "failed": "#d84a6a", "crashed": "#d84a6a", "broken": "#d84a6a"}
# a sweep trial's Optuna state (Sweeps tab: table, objective and parallel-coordinates plots)
TRIAL_STATE_COLORS = {"complete": "#3d8ee8", "running": "#3fa34d", "pruned": "#c9a227", "fail": "#d84a6a", "waiting": MUTED}
# curves readable on both backgrounds
SERIES_COLORS = ["#3d8ee8", "#e8883d", "#4caf50", "#d84a6a", "#9c6ade", "#c9a227", "#26a69a", "#8d6e63"]
CAPACITY_COLOR, ESTIMATE_COLOR = "#d84a6a", "#c9a227"  # the GPU memory plot's two marks
LIMIT_COLOR = CAPACITY_COLOR  # a limit of the card: capacity, slowdown temperature, power limit
# the whole card's memory and this run's own share: far apart from each other and from the marks above
MEMORY_CARD_COLOR, MEMORY_RUN_COLOR = "#3d8ee8", "#9c6ade"
BASELINE_COLOR = "#8a8a8a"  # the baseline's band on the Results overlay
ALERT_COLOR = "#ff3b30"  # readings past a threshold (and the status line naming them)
THROTTLE_COLOR = (232, 136, 61, 45)  # spans of the GPU plots where NVML said the clocks were slowed (RGBA, see-through)
# the run's own processes: CPU and RAM
HOST_COLORS = {"process_cpu_pct": "#26a69a", "host_memory_bytes": "#e8883d"}
# the fit bar's segments: Okabe-Ito colours, distinguishable with colour-blindness and on both palettes
SEGMENT_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"]
# the Monitor's time split bar: collecting, training, the rest
TIME_SPLIT_COLORS = ("#3b82f6", "#f59e0b", "#9ca3af")
# a policy's frames (Watch): a dark stage on either palette, as a video player has
FRAME_BACKGROUND, FRAME_TEXT = "#202020", "#e0e0e0"


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

    def drawPrimitive(self, element: QStyle.PrimitiveElement, option: QStyleOption,  # noqa: N802 (Qt API)
                      painter: QPainter, widget: QWidget | None = None) -> None:
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


def apply_theme(app: QApplication, dark: bool | None = None, plots: bool = True) -> bool:
    """Style the whole app for ``dark`` (default: the system's scheme); returns the choice.

    ``plots=False`` leaves pyqtgraph unimported (the window's start: its first frame has no plot yet); whoever
    makes the first plot then calls ``apply_plot_theme()``.
    """
    dark = system_is_dark() if dark is None else dark
    global _STYLE
    if _STYLE is None:
        _STYLE = IndicatorStyle("Fusion")
        app.setStyle(_STYLE)
    app.setPalette(palette_for(dark))
    if plots:
        apply_plot_theme(dark)
    return dark


def apply_plot_theme(dark: bool | None = None) -> None:
    """pyqtgraph's background and foreground for ``dark`` (default: the system's scheme); imports pyqtgraph."""
    import pyqtgraph as pg

    bg, fg = plot_colors(dark)
    pg.setConfigOptions(background=bg, foreground=fg, antialias=False)


# --- colours picked for a widget's own palette -------------------------------------------------

def is_dark(widget: QWidget) -> bool:
    return widget.palette().color(QPalette.ColorRole.Window).lightness() < 128


def _pair(widget: QWidget, pair: tuple[str, str] | None) -> QColor:
    """The light or dark colour of ``pair``; the palette's muted text colour when there is none."""
    if pair is None:
        return widget.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
    return QColor(pair[1 if is_dark(widget) else 0])


def error_color(widget: QWidget) -> QColor:
    return _pair(widget, RED)


def verdict_color(widget: QWidget, verdict: str | None) -> QColor:
    """Green / amber / red for fits / tight / does not fit; a muted text colour when unknown."""
    return _pair(widget, VERDICT_COLORS.get(verdict or ""))


def status_color(widget: QWidget, status: str) -> QColor:
    """A colour for a queue or job status (waiting: muted text)."""
    return _pair(widget, QUEUE_STATUS_COLORS.get(status))


def zoo_import_color(widget: QWidget, status: str) -> QColor:
    """Green / amber / red for an rl_zoo3 entry imported / imported with drops / refused."""
    return _pair(widget, ZOO_IMPORT_COLORS.get(status))


def state_color(state: str) -> QColor:
    """A run state's colour in the Runs and Results lists."""
    return QColor(STATE_COLORS.get(state, MUTED))


def segment_color(index: int) -> QColor:
    return QColor(SEGMENT_COLORS[index % len(SEGMENT_COLORS)])
