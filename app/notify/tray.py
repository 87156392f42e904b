"""The system-tray icon while the window runs: a tooltip (runs going, the followed run's progress),
a menu (open the window, stop a run, quit), and desktop notifications through ``showMessage``
(a toast on Windows). Where the platform has no tray (``QSystemTrayIcon.isSystemTrayAvailable()``
is false, as under the offscreen platform), there is no icon: ``fallback`` carries each
notification to the log panel instead, and ``unavailable_note`` says so once.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from core.util.paths import resources_dir

MESSAGE_MS = 15000
UNAVAILABLE_NOTE = ("This desktop has no system tray: rlpanel shows its notifications in the Log tab "
                    "(push notifications through notify.yaml still go out from the runs themselves).")
UNAVAILABLE_SHORT = "No system tray here: notifications show in the Log tab"  # the status bar's (the Log says more)


def tray_icon() -> QIcon:
    """rlpanel's icon in the sizes it ships (the tray picks 16 to 32 pixels)."""
    icon = QIcon()
    for png in sorted((resources_dir() / "icons").glob("rlpanel-*.png")):
        icon.addFile(str(png))
    return icon


def notice_line(title: str, body: str) -> str:
    """A notification as one line of the Log tab: the title once. A run's body starts by repeating its title
    ("rlpanel: run X finished" / "Run X finished: reason"), which a toast shows apart but one line read as
    "run X finished: Run X finished: reason"; the "rlpanel: " a toast needs to say whose it is goes too."""
    head = title.removeprefix("rlpanel: ")
    lines = body.splitlines()
    if lines and lines[0].lower().startswith(head.lower()):
        lines[0] = lines[0][len(head):].lstrip(": ")
    # its lines were sentences apart: joined, one that ends without a stop gets one
    text = " ".join(line if line.endswith((".", "!", "?", ":")) else f"{line}." for line in lines if line)
    return f"{head}: {text}" if text else head


class TrayIcon(QObject):
    open_requested = Signal()
    stop_requested = Signal(str)  # a run id
    quit_requested = Signal()
    fallback = Signal(str)  # a notification where there is no tray: for the log panel

    def __init__(self, parent: QObject | None = None, available: bool | None = None):
        super().__init__(parent)
        self.available = QSystemTrayIcon.isSystemTrayAvailable() if available is None else available
        self.active: list[str] = []
        self.tooltip = "rlpanel"
        self.menu = QMenu()
        self.open_action = QAction("Open window", self.menu)
        self.open_action.triggered.connect(self.open_requested)
        self.stop_menu = self.menu.addMenu("Stop a run")
        self.stop_menu.aboutToShow.connect(self._fill_stop_menu)
        self.quit_action = QAction("Quit rlpanel (runs keep training)", self.menu)
        self.quit_action.triggered.connect(self.quit_requested)
        self.menu.insertAction(self.stop_menu.menuAction(), self.open_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self._fill_stop_menu()
        self.icon: QSystemTrayIcon | None = None
        if self.available:
            self.icon = QSystemTrayIcon(tray_icon(), self)
            self.icon.setContextMenu(self.menu)
            self.icon.setToolTip(self.tooltip)
            self.icon.activated.connect(self._on_activated)
            self.icon.show()

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.open_requested.emit()

    def _fill_stop_menu(self) -> None:
        self.stop_menu.clear()
        for run_id in self.active:
            action = self.stop_menu.addAction(run_id)
            action.triggered.connect(lambda _checked=False, r=run_id: self.stop_requested.emit(r))
        if not self.active:
            self.stop_menu.addAction("No run is training").setEnabled(False)

    def set_status(self, active: list[str], followed: str | None) -> None:
        """The tooltip: how many runs are going and how far the followed one is."""
        self.active = list(active)
        lines = [f"rlpanel: {len(active)} run{'s' if len(active) != 1 else ''} going" if active else "rlpanel: no run going"]
        if followed:
            lines.append(followed)
        self.tooltip = "\n".join(lines)
        self._fill_stop_menu()
        if self.icon is not None:
            self.icon.setToolTip(self.tooltip)

    def notify(self, title: str, body: str, warning: bool = False) -> None:
        """A desktop notification; where there is no tray, one line for the log panel."""
        if self.icon is not None:
            kind = QSystemTrayIcon.MessageIcon.Warning if warning else QSystemTrayIcon.MessageIcon.Information
            self.icon.showMessage(title, body, kind, MESSAGE_MS)
        else:
            self.fallback.emit(f"*** {notice_line(title, body)}")

    def close(self) -> None:
        if self.icon is not None:
            self.icon.hide()
