"""The window's state across starts: its size fitted to the screen (a laptop's compact layout), the
splitters, the tab, the plots' axis and Configure's preset and edits, in the app's settings.

The geometry is kept per screen, keyed by the screen's available size (``window/geometry/1366x728``):
a window closed on a desktop monitor opens on the laptop's own screen at the laptop's size, not
at a size saved elsewhere that happens to squeeze in; a saved geometry that does not fit the
screen it was saved for (the screen's scale changed) is not restored either. The splitters are kept
per screen the same way (``window/splitters/1366x728``, ``monitor/splitters/1366x728``): a splitter
is in pixels, and one dragged on a wider screen gave Configure more than a 1280-pixel screen has to
spare and cut the GPU panels' messages at top and bottom there. A screen with none saved gets the
layout's own fit (``fit_shown``).

Functions of the window (``self``: what ``StatefulWindow`` names, the main window), kept apart from its wiring.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QByteArray, QRect
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QSplitter, QTabWidget

from app.configure.model import ConfigModel
from app.configure.panel import ConfigurePanel
from app.settings import get_setting, set_setting
from app.widgets.lazy_tabs import LazyTabs
from app.widgets.screen_fit import FRAME_ALLOWANCE

if TYPE_CHECKING:  # the Monitor is built after the first frame (pyqtgraph with it): restore_monitor then
    from app.monitor.panel import MonitorPanel


class StatefulWindow(Protocol):
    """What the window's state is read from and put back into (the main window is one)."""

    configure: ConfigurePanel
    config: ConfigModel
    splitter: QSplitter
    tabs: QTabWidget
    lazy_tabs: LazyTabs
    fit_splitter: bool

    def width(self) -> int: ...
    def height(self) -> int: ...
    def resize(self, w: int, h: int, /) -> None: ...
    def move(self, x: int, y: int, /) -> None: ...
    def screen(self) -> QScreen: ...
    def saveGeometry(self) -> QByteArray: ...  # noqa: N802 (Qt's names)
    def restoreGeometry(self, geometry: QByteArray, /) -> bool: ...  # noqa: N802


DEFAULT_SIZE = (1500, 920)
COMPACT_BELOW = 1000   # logical pixels of available height under which Configure folds its preset list (1600x900 too)
TABS_MIN_WIDTH = 660
TABS_PREFERRED_WIDTH = 690  # the tabs' width at 1280 logical pixels: a wider screen gives Configure the rest...
CONFIGURE_EXTRA = 120       # ...up to this much past its minimum
TABS_MIN_HEIGHT = 420
WINDOW_SPLITTERS = "window/splitters"    # + /WxH: Configure beside the tabs, per screen size
MONITOR_SPLITTERS = "monitor/splitters"  # + /WxH: the Monitor's reward, charts and GPU panels, per screen size


def restore_window(self: StatefulWindow) -> None:
    """Geometry, splitters, tab, axis and Configure's edits as the window last closed (sized to the screen)."""
    avail = available(self)
    geometry = get_setting(geometry_key(avail), QByteArray()) if avail is not None else QByteArray()
    restored = not geometry.isEmpty() and self.restoreGeometry(geometry)
    fit_screen(self, restored)
    split = restore_splitter(self.splitter, WINDOW_SPLITTERS, avail)
    # on a laptop screen that never saved one, fit_shown sizes Configure once the layouts know their widths
    self.fit_splitter = self.configure.compact and not split
    self.tabs.setCurrentIndex(get_setting("window/tab", 0))
    restore_configure(self)


def restore_monitor(monitor: MonitorPanel, avail: QRect | None) -> None:
    """The Monitor's axis, and its splitter as the window last closed on a screen of this size (when the Monitor
    is built)."""
    monitor.set_x_mode(get_setting("monitor/x_mode", "step"))
    restore_splitter(monitor.splitter, MONITOR_SPLITTERS, avail)


def restore_splitter(splitter: QSplitter, group: str, avail: QRect | None) -> bool:
    """Put back the sizes ``splitter`` had when the window last closed on a screen of this size; whether it had."""
    state = get_setting(screen_key(group, avail), QByteArray()) if avail is not None else QByteArray()
    return not state.isEmpty() and splitter.restoreState(state)

def available(self: StatefulWindow) -> QRect | None:
    """The available geometry of the window's screen (the primary one before it is shown); None without a screen."""
    screen = self.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else None


def geometry_key(avail: QRect) -> str:
    """The setting holding the geometry saved on a screen of this available size."""
    return screen_key("window/geometry", avail)


def screen_key(group: str, avail: QRect) -> str:
    """The setting of ``group`` saved on a screen of this available size."""
    return f"{group}/{avail.width()}x{avail.height()}"


def fit_screen(self: StatefulWindow, restored: bool = False) -> None:
    """First start: sized to the available screen, never larger; a restored size only if it fits.

    On a laptop-sized screen (under 1000 logical pixels high: 1600x900, 1366x768, or 1920x1080 at 150 %)
    the Configure panel folds its preset list away so the forms keep their rows.
    """
    avail = available(self)
    if avail is None:
        return
    frame = FRAME_ALLOWANCE
    if not restored or self.width() > avail.width() or self.height() + frame > avail.height():
        self.resize(min(DEFAULT_SIZE[0], avail.width()), min(DEFAULT_SIZE[1], avail.height() - frame))
        self.move(avail.left() + (avail.width() - self.width()) // 2, avail.top())
    compact = avail.height() < COMPACT_BELOW
    self.configure.set_compact(compact)
    # the tab pages may be narrower than they ask (the Queue tab's table scrolls) so that the window
    # never outgrows a 1280-pixel-wide screen
    self.tabs.setMinimumWidth(TABS_MIN_WIDTH if compact else 0)
    self.tabs.setMinimumHeight(TABS_MIN_HEIGHT if compact else 0)  # the Monitor's plots get shorter instead

def fit_shown(self: StatefulWindow) -> None:
    """After the first show, when every layout knows its real minimum width: a window a layout made wider than
    the screen on the way (a preset list folded after it was measured) is narrowed to the screen; on a laptop
    screen Configure gets its minimum width and what the tabs do not need up to ``CONFIGURE_EXTRA`` more
    (its forms then put more labels beside their fields), the tabs the rest."""
    avail = available(self)
    if avail is None:
        return
    if self.width() > avail.width():
        self.resize(avail.width(), self.height())
        self.fit_splitter = True
    if not getattr(self, "fit_splitter", False):
        return
    least = self.configure.minimumSizeHint().width()
    width = self.splitter.width() - self.splitter.handleWidth()
    configure = min(least + CONFIGURE_EXTRA, max(least, width - TABS_PREFERRED_WIDTH))
    self.splitter.setSizes([configure, width - configure])


def restore_configure(self: StatefulWindow) -> None:
    """The preset and edits Configure held when the window closed (a bad value comes back as an error)."""
    try:
        saved = json.loads(get_setting("configure/state", "") or "{}")
    except ValueError:
        return
    if isinstance(saved, dict) and (saved.get("preset") or saved.get("overrides")):
        self.config.load_edits(saved.get("preset"), saved.get("overrides") or {})

def save_window(self: StatefulWindow) -> None:
    """What ``restore_window`` reads back, written when the window closes."""
    state = self.config.state
    set_setting("configure/state", json.dumps({"preset": state.preset, "overrides": state.overrides}, default=str))
    avail = available(self)
    if avail is not None:
        set_setting(geometry_key(avail), self.saveGeometry())
        set_setting(screen_key(WINDOW_SPLITTERS, avail), self.splitter.saveState())
    set_setting("window/tab", self.tabs.currentIndex())
    if self.lazy_tabs.is_built("Monitor"):  # else what it would save is what was read
        monitor: MonitorPanel = self.lazy_tabs.get("Monitor")  # type: ignore[assignment]
        set_setting("monitor/x_mode", monitor.x_mode.currentData())
        if avail is not None:
            set_setting(screen_key(MONITOR_SPLITTERS, avail), monitor.splitter.saveState())
