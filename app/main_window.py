"""The main window: Configure on the left; Monitor, Runs, Log and System tabs on the right.

The window drives ``core``: Launch creates the run folder and starts a detached worker, a
``RunFollower`` (a controller in its own thread) follows the run folder, Stop/Resume/Restart go through
``core.launch.control`` (the toolbar's actions: ``app.run_actions``). Closing the window never stops a run; a later
window re-attaches to it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QPaintEvent, QShowEvent
from PySide6.QtWidgets import QApplication, QMainWindow, QSplitter, QTabWidget
from shiboken6 import isValid

from app.configure.estimator import target_choices
from app.configure.fold import ConfigureFold
from app.configure.model import ConfigModel
from app.configure.panel import ConfigurePanel
from app.monitor.idle_gpu import IdleGpuMonitor
from app.monitor.log_panel import LogPanel
from app.monitor.tensorboard import TensorBoardLauncher
from app.notify.notifier import WindowNotifier
from app.run_actions import RunActions
from app.runs.close_prompt import close_anyway
from app.runs.panel import RunsPanel
from app.tabs.builders import later_tabs
from app.tabs.panel import Panel
from app.theme import apply_plot_theme, apply_theme, plot_colors
from app.threads.background import run_in_background
from app.widgets.elided_label import ElidedLabel
from app.widgets.lazy_tabs import LazyTabs
from app.window_state import available, fit_shown, restore_monitor, restore_window, save_window
from core.estimate.result import FitEstimate
from core.run.names import config_algo, read_run_label
from core.run.states import ACTIVE, FAILED, TERMINAL
from core.run.status import RunStatus, stall_note
from core.run.store import RunInfo, RunStore
from core.util.paths import absolute

if TYPE_CHECKING:  # built after the first frame or when first shown (LazyTabs): their modules (pyqtgraph, scipy...) load then
    from app.monitor.follower import RunFollower
    from app.monitor.panel import MonitorPanel
    from app.queue.panel import QueuePanel
    from app.results.panel import ResultsPanel
    from core.run.cache.columns import MetricsBatch, TelemetryBatch

AFTER_FIRST_FRAME_AT_LATEST_MS = 1500


class MainWindow(QMainWindow):
    first_frame = Signal()  # once, when the window's first frame has been painted (the startup bench's time)
    settled = Signal()  # once, when the steps after the first frame are done (``started()``: the bench's second time)

    def __init__(self, runs_dir: Path | str, confirm_close: bool = True, tray: bool | None = None):
        super().__init__()
        self.runs_dir = absolute(runs_dir)  # handed to workers and the queue runner
        self.store = RunStore(self.runs_dir)
        self.confirm_close = confirm_close
        self.run_dir: Path | None = None  # the followed run
        self.run_state: str | None = None
        self._attached_on_start = False
        self._closed = False  # closed for good: an answer arriving later (the runs listing) starts nothing
        self._idle_unavailable: str | None = None
        self._pending_estimate: FitEstimate | None = None
        self._device: str | None = None  # the device the followed run trains on (its status.json)
        self.active_run_ids: list[str] = []  # the runs folder's active runs, from the Runs tab's last listing
        self.setWindowTitle("rlpanel")
        self._build_panes()
        self.run_actions = RunActions(self)  # Launch, Stop, Resume, Restart
        self._build_actions()
        # it names the followed run's folder: a long name elides rather than widen the status bar and the window
        self.state_label = ElidedLabel()
        self.statusBar().addPermanentWidget(self.state_label)
        self._follower: RunFollower | None = None  # made after the first frame (its module loads numpy)
        self._build_helpers()
        self._connect_runs()
        self._connect_configure()
        self.notifier = WindowNotifier(self, tray_available=tray)  # the tray icon and desktop notifications
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_color_scheme)
        self._plan_after_first_frame()
        self.fit_splitter = False  # window_state.fit_shown sizes the splitter once shown (a laptop screen, no saved state)
        restore_window(self)
        self.update_actions()

    # --- construction ----------------------------------------------------------------------

    def _build_panes(self) -> None:
        """Configure on the left, the tabs on the right, in a splitter."""
        # what Configure edits and the Queue tab turns into jobs: validated, and its env probed, after the first frame
        self.config = ConfigModel(self, hold_probes=True, hold_validation=True)
        self.config.runs_dir = self.runs_dir
        self.configure = ConfigurePanel(self.config, detect_gpus=False, later_forms=True)  # NVML, the forms below the
        # fold: after the first frame
        self.runs = RunsPanel(self.runs_dir, list_now=False)  # listed after the first frame
        self.log = LogPanel()
        self.tabs = QTabWidget()
        # the Monitor is built right after the first frame; Results, Queue, Sweeps and System when first shown (or first
        # asked for): the first frame waits for neither them nor their modules (docs/window.md)
        self.lazy_tabs = LazyTabs(self.tabs)
        self.lazy_tabs.add("Monitor", self._build_monitor, waiting="Starting the plots…")
        later = later_tabs(self.runs_dir, self.config, self.open_run)
        for name, page in (("Runs", self.runs), ("Results", later["Results"]), ("Queue", later["Queue"]),
                           ("Sweeps", later["Sweeps"]), ("Log", self.log), ("System", later["System"])):
            self.lazy_tabs.add(name, page)
        self.tabs.currentChanged.connect(self._tab_shown)
        self.configure_fold = ConfigureFold(self.configure, self.lazy_tabs)  # a laptop's Results: Configure folds away
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.configure)
        self.splitter.addWidget(self.tabs)
        self.splitter.setChildrenCollapsible(False)  # dragged to its edge, a side keeps its minimum: never a cut word
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([430, 1000])
        self.setCentralWidget(self.splitter)

    def _build_helpers(self) -> None:
        """TensorBoard's launcher and the idle GPU monitor (NVML starts after the first frame)."""
        self.tensorboard = TensorBoardLauncher(self)
        self.tensorboard.message.connect(lambda text: self.statusBar().showMessage(text, 15000))
        self.runs.tensorboard_requested.connect(self.tensorboard.open)
        self.gpu_monitor = IdleGpuMonitor(self, start=False)
        self.gpu_monitor.samples.connect(self._on_idle_samples)
        self.gpu_monitor.unavailable.connect(self._on_idle_unavailable)

    def _connect_runs(self) -> None:
        self.runs.open_requested.connect(self.open_run)
        self.runs.resume_requested.connect(self.run_actions.resume_run)
        self.runs.restart_requested.connect(self.run_actions.restart_run)
        self.runs.selection_changed.connect(lambda _info: self.update_actions())
        self.runs.refreshed.connect(self._on_runs_listed)

    def _plan_after_first_frame(self) -> None:
        self._shown = False
        self._painted = False
        self._after_done = False  # _after_first_frame ran (or the window closed first: then it never does)
        self._after_steps: list[Callable[[], None]] = []  # what is left of it: one step per event-loop turn
        self._after_timer = QTimer(self)
        self._after_timer.setSingleShot(True)
        self._after_timer.timeout.connect(self._after_first_frame)
        self._after_timer.start(AFTER_FIRST_FRAME_AT_LATEST_MS)

    def _build_monitor(self) -> MonitorPanel:
        apply_plot_theme()
        from app.monitor.panel import MonitorPanel

        monitor = MonitorPanel()
        monitor.tensorboard_requested.connect(lambda: self.tensorboard.open(self.run_dir))
        monitor.close_requested.connect(lambda: self.follow_run(None))
        monitor.apply_theme(*plot_colors())
        restore_monitor(monitor, available(self))
        if self.run_dir is None:  # what came while it was not built yet
            monitor.set_estimate(self._pending_estimate)
            if self._idle_unavailable is not None:
                monitor.set_gpu_unavailable(self._idle_unavailable)
        return monitor

    @property
    def follower(self) -> RunFollower:
        """The run follower (its thread), made when first needed: after the first frame at the latest."""
        if self._follower is None:
            from app.monitor.follower import RunFollower

            follower = self._follower = RunFollower(self)
            follower.records.connect(self._on_records)
            follower.telemetry.connect(self._on_telemetry)
            follower.status.connect(self._on_status)
            follower.log_lines.connect(self.log.add_log_lines)
            follower.loading.connect(self._on_loading)
            follower.stop_finished.connect(self.run_actions.stop_finished)
        return self._follower

    @property
    def monitor(self) -> MonitorPanel:
        return cast("MonitorPanel", self.lazy_tabs.get("Monitor"))

    @property
    def results(self) -> ResultsPanel:
        return cast("ResultsPanel", self.lazy_tabs.get("Results"))

    @property
    def queue(self) -> QueuePanel:
        return cast("QueuePanel", self.lazy_tabs.get("Queue"))

    def _after_first_frame(self) -> None:
        """What the first frame does not wait for: the Monitor's plots (pyqtgraph), the run follower, the env's spaces
        and with them the estimate (gymnasium), the runs listing (and with it the re-attach to a running run) and NVML's
        idle GPU monitor. Once, at the first frame or ``AFTER_FIRST_FRAME_AT_LATEST_MS`` after
        construction, whichever comes first (a window started minimised paints nothing)."""
        if self._after_done:
            return
        self._after_done = True
        self._after_timer.stop()
        # in steps, one per event-loop turn, so the window answers between them (a click, a repaint): Configure's
        # verdict (the first validation: pydantic builds its schema then), its forms below the fold, the Monitor's
        # modules (pyqtgraph, numpy), the Monitor, and the rest
        self._after_steps = [self.config.flush, self.configure.build_later_forms, self._import_monitor,
                             self._show_monitor, self._start_following]
        self._next_after_step()

    def started(self) -> bool:
        """All that follows the first frame is built (the Monitor, the forms below the fold, the follower)."""
        return self._after_done and not self._after_steps

    def _next_after_step(self) -> None:
        if not self._after_steps or not isValid(self):  # done, or the window closed meanwhile
            return
        self._after_steps.pop(0)()
        if self._after_steps:
            QTimer.singleShot(0, self._next_after_step)
        elif isValid(self):
            self.settled.emit()

    def _import_monitor(self) -> None:
        apply_plot_theme()
        import app.monitor.panel  # noqa: F401 (pyqtgraph and numpy: a step of their own)

    def _show_monitor(self) -> None:
        self.lazy_tabs.get("Monitor")
        if self._shown:  # the Monitor's plots widen the tabs: fit the window and its splitter to the screen again
            QTimer.singleShot(0, self._fit_again)

    def _start_following(self) -> None:
        _ = self.follower
        # this machine's GPUs (NVML), off the GUI thread; then the env's spaces and the estimate, which plans for them
        run_in_background(target_choices, self._targets_found, lambda _why: self._targets_found(None))
        self.runs.refresh()
        self.gpu_monitor.start()

    def _fit_again(self) -> None:
        if isValid(self):
            fit_shown(self)

    def _targets_found(self, choices: list[tuple[str, str]] | None) -> None:
        if not isValid(self):  # the window closed meanwhile
            return
        # NVML failed: the shipped profiles still
        self.configure.show_targets(choices if choices is not None else target_choices(detect=False))
        self.config.release_probes()

    def _tab_shown(self, _index: int) -> None:
        page = self.tabs.currentWidget()
        if isinstance(page, Panel):  # built (a placeholder waits for its owner's get)
            page.on_shown()

    def current_tab(self) -> str:
        return self.lazy_tabs.current_name()

    def show_tab(self, name: str) -> None:
        self.tabs.setCurrentWidget(self.lazy_tabs.get(name))

    def launch_configured(self) -> None:
        """Launch (button or Ctrl+Enter): Configure validates and emits its request (``run_actions.launch_requested``)."""
        if not self.configure.request_launch():  # refused: the reason is in Configure, shown if folded away
            self.configure_fold.unfold()

    def stop_followed(self, timeout_s: float) -> None:
        self.follower.stop(timeout_s)

    def _build_actions(self) -> None:
        bar = self.run_actions.toolbar()
        self.addActions(list(self.run_actions.all()))  # shortcuts work wherever the focus is
        self.notify_action = QAction("Notifications…", self)
        self.notify_action.setToolTip("Push notifications (apprise URLs: ntfy, Telegram, e-mail...), which events go where, "
                                      "Send test; the tray icon")
        self.notify_action.triggered.connect(lambda: self.notifier.open_settings())
        bar.addSeparator()
        bar.addAction(self.notify_action)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)

    def _connect_configure(self) -> None:
        self.configure.launch_requested.connect(self.run_actions.launch_requested)
        self.config.estimate_changed.connect(self._on_estimate_changed)

    # --- following -------------------------------------------------------------------------

    def open_run(self, run_dir: Path) -> None:
        """Show a run's plots and log (double-click in Runs)."""
        self.follow_run(Path(run_dir))
        self.tabs.setCurrentWidget(self.monitor)

    def follow_run(self, run_dir: Path | None, estimate: FitEstimate | None = None) -> None:
        """Show ``run_dir`` from its first record (None: the live GPU monitor)."""
        if self._closed:  # the re-attach of a runs listing answered after the close: no follower thread left behind
            return
        self.run_dir = Path(run_dir) if run_dir else None
        self._device = None
        self._algo: str | None = None  # the followed run's algorithm (the time split's advice depends on it)
        self.run_state = None
        if self.run_dir is None:
            from app.monitor.panel import IDLE_TITLE

            self.monitor.set_run(None, IDLE_TITLE)
            self.log.set_run("No run followed")
            self.monitor.set_gpu_unavailable(self._idle_unavailable)
        else:
            self.monitor.set_run(self.run_dir, self._run_title())
            info = self.runs.infos.get(self.run_dir.name)
            self._algo = info.algo if info is not None else config_algo(self.run_dir)
            self.log.set_run(f"{self.run_dir.name}: worker.log and events")
            self.runs.select(self.run_dir.name)
        self.monitor.set_estimate(estimate if run_dir else self._pending_estimate)
        self.follower.follow(self.run_dir)
        self.update_actions()

    def _run_title(self) -> str:
        if self.run_dir is None:
            from app.monitor.panel import IDLE_TITLE

            return IDLE_TITLE
        info = self.runs.infos.get(self.run_dir.name)
        label = info.label if info is not None else read_run_label(self.run_dir)
        name = f"{label}  ({self.run_dir.name})" if label != self.run_dir.name else self.run_dir.name
        if not self.run_state:
            return name
        return f"{name}  [{self.run_state}, on {self._device}]" if self._device else f"{name}  [{self.run_state}]"

    def _on_records(self, batch: MetricsBatch) -> None:
        self.monitor.add_batch(batch)
        self.log.add_events(batch.events)

    def _on_telemetry(self, batch: TelemetryBatch) -> None:
        self.monitor.add_telemetry_batch(batch)

    def _on_loading(self, share: float) -> None:
        self.monitor.set_loading(share if share >= 0 else None)

    def _on_status(self, status: RunStatus) -> None:
        previous, self.run_state = self.run_state, status.state
        name = self.run_dir.name if self.run_dir else ""
        self._device = status.device  # written by the worker: the device it really trains on
        self.monitor.time_split.set_context(status.device, self._algo)  # what its advice depends on
        self.monitor.set_title(self._run_title())
        self.monitor.set_run_state(self.run_state, status.pause_reason if self.run_state == "paused" else stall_note(status))
        if previous in ACTIVE and self.run_state in TERMINAL:
            # the stop's own result ("stopped gracefully (checkpoint saved)") says more than "stopped"
            stopped = self.run_actions.stop_words.get(name) if self.run_state == "stopped" else None
            message = f"{name} {stopped or self.run_state}"
            if self.run_state in FAILED and status.error_message:
                message += f": {status.error_message}"
            self.statusBar().showMessage(message, 20000)
            self.runs.refresh()
        if self.run_state in FAILED and status.error:
            self.log.add_line(f"*** run {self.run_state}: {status.error.get('message', '')}", status.ended_at)
        self.update_actions()

    def _on_runs_listed(self, infos: list[RunInfo]) -> None:
        active = [i for i in infos if i.state in ACTIVE]
        if not self._attached_on_start:
            self._attached_on_start = True
            if active and self.run_dir is None:  # re-attach to what an earlier window started
                self.follow_run(active[0].path)
                self.statusBar().showMessage(f"Re-attached to {active[0].id}, still {active[0].state}", 10000)
        self.active_run_ids = [i.id for i in active]
        self.update_actions()

    def _on_idle_samples(self, samples: list[dict[str, Any]]) -> None:
        if self.run_dir is None:
            self.monitor.add_telemetry(samples)

    def _on_idle_unavailable(self, reason: str) -> None:
        self._idle_unavailable = reason
        if self.run_dir is None and self.lazy_tabs.is_built("Monitor"):  # else the Monitor is built with it
            self.monitor.set_gpu_unavailable(reason)

    def _on_estimate_changed(self, estimate: FitEstimate | None) -> None:
        self._pending_estimate = estimate
        if self.run_dir is None and self.lazy_tabs.is_built("Monitor"):  # else the Monitor is built with it
            self.monitor.set_estimate(estimate)

    def update_actions(self) -> None:
        """The Run toolbar's actions enabled for what they can act on now, and the status bar's line of runs."""
        self.run_actions.update()
        active = self.active_run_ids
        if active:
            self.state_label.setText(f"{len(active)} run(s) training. Closing this window does not stop them.")
        elif self.run_dir is not None:
            self.state_label.setText(f"{self.run_dir.name}: {self.run_state or '...'}")
        else:
            self.state_label.setText("No run active")

    # --- window state ----------------------------------------------------------------------

    def _on_color_scheme(self, _scheme: Qt.ColorScheme | None = None) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app)
        if self.lazy_tabs.is_built("Monitor"):
            self.monitor.apply_theme(*plot_colors())

    def running_runs(self) -> list[str]:
        ids = set(self.active_run_ids)
        if self.run_dir is not None and self.run_state in ACTIVE:
            ids.add(self.run_dir.name)
        return sorted(ids)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt API)
        super().paintEvent(event)
        if not self._painted:  # the children paint in this same pass: what follows runs once they are on screen
            self._painted = True
            QTimer.singleShot(0, self.first_frame.emit)
            self._after_timer.start(0)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            QTimer.singleShot(0, lambda: fit_shown(self))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt API)
        if self.notifier.keeps_running():  # the tray icon stays (a setting): the window only hides
            event.ignore()
            save_window(self)
            self.hide()
            self.notifier.hid_window()
            return
        running = self.running_runs()
        if self.confirm_close and not close_anyway(self, running):
            self.notifier.quitting = False
            event.ignore()
            return
        if running:
            print(f"rlpanel: the window closed; {len(running)} run(s) keep training: {', '.join(running)}", file=sys.stderr)
        save_window(self)
        self._closed = True
        self._after_done = True  # a window closed before its first frame starts no thread after it
        self._after_steps.clear()  # nor one closed between the steps after it
        self._after_timer.stop()
        self.notifier.close()
        if self._follower is not None:
            self._follower.close()
        self.gpu_monitor.close()
        self.tensorboard.close()
        for page in self.lazy_tabs.built_pages():
            if isinstance(page, Panel):
                page.on_closing()
        super().closeEvent(event)


def quit_after(ms: int) -> None:
    """Close every window after ``ms`` (the smoke test and the startup bench use this)."""
    QTimer.singleShot(ms, QApplication.closeAllWindows)
