"""The window's side of notifications: the tray icon kept up to date from the Runs tab's listing,
a desktop notification when a run ends or pauses or the queue ends, and the tray's menu wired to
the window. Push notifications are not sent from here: the runs send them (core/notify).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QStatusBar, QWidget

from app.monitor.log_panel import LogPanel
from app.notify.run_endings import GOING, RunEventWatcher
from app.notify.tray import UNAVAILABLE_NOTE, UNAVAILABLE_SHORT, TrayIcon
from app.runs.panel import RunsPanel
from app.settings import get_setting

# the settings dialog, the messages, the queue's state and stop requests load when first used, after the window's
# first frame: its start waits for none of them
if TYPE_CHECKING:
    from app.notify.settings_dialog import NotifySettingsDialog

WARNING_EVENTS = ("failed", "crashed", "stalled", "paused")


class NotifiedWindow(Protocol):
    """What the notifier needs of the window (the main window is one): its Log and Runs tabs, its folders, and
    being shown, raised and closed."""

    log: LogPanel
    runs: RunsPanel
    runs_dir: Path
    run_dir: Path | None

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 (Qt's names)
    def showNormal(self) -> None: ...  # noqa: N802
    def raise_(self) -> None: ...
    def activateWindow(self) -> None: ...  # noqa: N802
    def close(self) -> bool: ...


class WindowNotifier(QObject):
    def __init__(self, window: NotifiedWindow, tray_available: bool | None = None):
        super().__init__(window if isinstance(window, QObject) else None)  # lives as long as the window
        self.window = window
        self.tray = TrayIcon(self, available=tray_available)
        self.watcher = RunEventWatcher()
        self.quitting = False
        self.in_tray = False  # the window is hidden, the tray icon stays
        self.shown: list[tuple[str, str]] = []  # (title, body) of every desktop notification, newest last
        self.tray.fallback.connect(window.log.add_notice)
        self.tray.open_requested.connect(self.show_window)
        self.tray.stop_requested.connect(self.stop)
        self.tray.quit_requested.connect(self.quit)
        window.runs.refreshed.connect(self.on_listing)
        if not self.tray.available:
            window.statusBar().showMessage(UNAVAILABLE_SHORT, 20000)
            window.log.add_notice(f"*** {UNAVAILABLE_NOTE}")

    def on_listing(self, infos: list[Any]) -> None:
        from core.notify.messages import queue_message, run_message
        from core.queue.state import read_queue

        for event in self.watcher.update(infos):
            try:
                title, body = run_message(event.path, event.event)
            except OSError:
                title, body = f"rlpanel: run {event.run_id} {event.event}", f"Run {event.run_id} {event.event}."
            self.notify(title, body, event.event in WARNING_EVENTS)
        queue = read_queue(self.window.runs_dir)
        if self.watcher.queue_ended(queue.state if queue is not None else None) and queue is not None:
            self.notify(*queue_message(queue.to_json()), warning=queue.state != "finished")
        self.tray.set_status([i.id for i in infos if i.state in GOING], self.followed_line(infos))

    def followed_line(self, infos: list[Any]) -> str | None:
        run_dir = self.window.run_dir
        info = next((i for i in infos if run_dir is not None and i.id == run_dir.name), None)
        if info is None:
            return None
        if info.total:
            share = info.steps / info.shown_total
            return f"{info.id}: {info.state}, {info.steps_text(' of ')} steps ({100 * share:.0f} %)"
        return f"{info.id}: {info.state}, {info.steps:,} steps"

    def notify(self, title: str, body: str, warning: bool = False) -> None:
        self.shown.append((title, body))
        self.tray.notify(title, body, warning)

    def show_window(self) -> None:
        self.in_tray = False
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def stop(self, run_id: str) -> None:
        """Ask a run to stop (it saves a checkpoint at its next check, within seconds)."""
        from core.launch.control import request_stop

        try:
            request_stop(self.window.runs_dir / run_id, "requested from the tray")
        except OSError as exc:
            self.notify(f"rlpanel: {run_id} could not be asked to stop", str(exc), warning=True)
            return
        self.window.statusBar().showMessage(f"Asked {run_id} to stop (it saves a checkpoint first)", 10000)

    def keeps_running(self) -> bool:
        """Whether closing the window only hides it: the tray icon stays (a setting) and the tray exists."""
        from app.notify.settings_dialog import KEEP_TRAY_KEY

        return self.tray.available and not self.quitting and get_setting(KEEP_TRAY_KEY, False)

    def hid_window(self) -> None:
        self.in_tray = True
        self.notify("rlpanel is still here", "The window is closed; the tray icon keeps telling you how the runs end. "
                         "Quit from its menu.")

    def quit(self) -> None:
        """Quit from the tray's menu: the window closes for good (runs keep training), and the app ends
        even when the window was hidden (a hidden window closing is not "the last window closed")."""
        self.quitting = True
        hidden = self.in_tray
        if self.window.close() and hidden:
            app = QApplication.instance()
            if app is not None:
                app.quit()

    def open_settings(self) -> NotifySettingsDialog:
        from app.notify.settings_dialog import NotifySettingsDialog

        dialog = NotifySettingsDialog(self.window if isinstance(self.window, QWidget) else None)
        dialog.setModal(True)
        dialog.show()
        return dialog

    def close(self) -> None:
        self.tray.close()
