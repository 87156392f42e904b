"""The Run toolbar's actions, Launch, Stop, Resume and Restart, and what each does to a run.

``RunActions`` belongs to the main window, which it sees through ``ActionHost`` (a Protocol, as the notifier sees
the window through ``NotifiedWindow``: neither imports it). It starts runs (``core.launch.start``), asks the followed one
to stop, resumes and restarts ended ones (``core.launch.control``), and has the window follow the run it acted on.
``core.launch.start`` and ``core.launch.control`` load at the first launch, resume or restart, not at start-up."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QStatusBar, QToolBar, QWidget

from app.runs.panel import RunsPanel
from app.threads.background import run_in_background
from core.config.seeds import seeds_text
from core.config.trust import config_modules, is_trusted, trust
from core.run.layout import RunDir
from core.run.states import ACTIVE, RESUMABLE, TERMINAL
from core.run.store import RunInfo, RunStore

if TYPE_CHECKING:
    from app.configure.launch_row import LaunchRequest
    from core.config.schema import RunConfig  # pydantic: loaded by the first validation, after the first frame
    from core.estimate.result import FitEstimate
    from core.launch.start import StartedGroup  # core.launch.start and .control load at the first launch, resume or restart

STOP_TIMEOUT_S = 60.0
STATUS_WORDS = {"graceful": "stopped gracefully (checkpoint saved)",
                "terminated": "did not stop in time and was terminated",
                "not running": "was not running"}


class ActionHost(Protocol):
    """What Launch, Stop, Resume and Restart need of the window (the main window is one): the runs folder, the Runs
    tab, the followed run and its state, following a run, its tabs by name and the status bar."""

    store: RunStore
    runs: RunsPanel
    run_dir: Path | None
    run_state: str | None
    confirm_close: bool  # False in tests and benches: no question asked

    def follow_run(self, run_dir: Path | None, estimate: FitEstimate | None = None) -> None: ...
    def launch_configured(self) -> None: ...  # Configure validates and emits its LaunchRequest (or says why not)
    def stop_followed(self, timeout_s: float) -> None: ...  # asks the followed run to stop; stop_finished says how
    def update_actions(self) -> None: ...
    def current_tab(self) -> str: ...
    def show_tab(self, name: str) -> None: ...
    def statusBar(self) -> QStatusBar: ...  # noqa: N802 (Qt's name)


class RunActions:
    """The window's Launch, Stop, Resume and Restart: their ``QAction``s (toolbar and shortcuts) and their work."""

    def __init__(self, window: ActionHost):
        self.window = window
        self.parent = window if isinstance(window, QWidget) else None  # the dialogs' parent
        self.stop_words: dict[str, str] = {}  # how a stop we asked for ended, by run id
        self._build_actions(window if isinstance(window, QObject) else None)

    def _build_actions(self, owner: QObject | None) -> None:
        self.launch_action = QAction("Launch", owner)
        self.launch_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        self.launch_action.setToolTip("Launch a run with the configuration on the left (Ctrl+Enter)")
        self.launch_action.triggered.connect(self.request_launch)
        self.stop_action = QAction("Stop", owner)
        self.stop_action.setShortcuts([QKeySequence("Ctrl+."), QKeySequence("Ctrl+Shift+S")])
        self.stop_action.setToolTip("Ask the followed run to stop at its next check, saving a checkpoint (Ctrl+.)")
        self.stop_action.triggered.connect(self.stop_run)
        self.resume_action = QAction("Resume", owner)
        self.resume_action.setToolTip("Continue the selected (or followed) stopped, failed or crashed run "
                                      "from its latest checkpoint")
        self.resume_action.triggered.connect(self._resume_target)
        self.restart_action = QAction("Restart", owner)
        self.restart_action.setToolTip("Train the selected (or followed) ended run again from step 0 with its config; "
                                       "its old curve is kept as superseded")
        self.restart_action.triggered.connect(self._restart_target)

    def all(self) -> tuple[QAction, ...]:
        return self.launch_action, self.stop_action, self.resume_action, self.restart_action

    def toolbar(self) -> QToolBar:
        """The Run toolbar: the four actions in words, fixed at the window's top."""
        bar = QToolBar("Run")
        bar.setObjectName("runToolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        bar.addActions(list(self.all()))
        return bar

    def update(self) -> None:
        """Each action enabled when it has a run to act on: Stop the followed active run, Resume and Restart
        ``target()``."""
        w = self.window
        self.stop_action.setEnabled(w.run_dir is not None and w.run_state in ACTIVE)
        target = self.target()
        self.resume_action.setEnabled(target is not None and target.state in RESUMABLE and target.has_checkpoint)
        self.restart_action.setEnabled(target is not None and target.state in TERMINAL)

    def target(self) -> RunInfo | None:
        """The run Resume and Restart act on: the one selected in Runs (on that tab), else the followed one."""
        w = self.window
        info = w.runs.selected_info() if w.current_tab() == "Runs" else None
        if info is None and w.run_dir is not None:
            known = w.runs.infos.get(w.run_dir.name)
            info = RunInfo(w.run_dir.name, w.run_dir, w.run_state or (known.state if known else "unknown"),
                           has_checkpoint=RunDir(w.run_dir).latest_checkpoint.is_file())
        return info

    # --- launch ----------------------------------------------------------------------------------

    def request_launch(self) -> None:
        """Launch (button or Ctrl+Enter): the Configure panel validates and emits the request."""
        self.window.launch_configured()

    def launch_requested(self, request: LaunchRequest) -> None:
        if request.seeds:
            self.launch_group(request.config, request.seeds, request.preset, request.warnings, request.estimate)
        else:
            self.launch(request.config, request.preset, request.warnings, request.estimate)

    def launch_group(self, config: RunConfig, seeds: list[int], preset: str | None = None,
                     warnings: list[str] | tuple[str, ...] = (), estimate: FitEstimate | None = None) -> StartedGroup | None:
        """Start one run of ``config`` per seed at once, as a group (``rlpanel train --seeds``); the Runs tab shows
        them, the Monitor follows the first."""
        if not self.confirm_code(config, preset):
            return None
        from core.launch.start import start_group

        w = self.window
        try:
            group = start_group(w.store, config, seeds, preset, warnings, import_folder=os.getcwd())
        except Exception as exc:  # noqa: BLE001 (show why the launch failed, keep the window)
            QMessageBox.warning(self.parent, "Launch failed", f"The group could not be started:\n{exc}")
            return None
        w.follow_run(group.runs[0].run_dir, estimate=estimate)
        w.statusBar().showMessage(f"Launched group {group.id}: {len(group.runs)} runs of {group.name} "
                                  f"({seeds_text(group.seeds)})" + "".join(f"; note: {n}" for n in group.notes),
                                  30000 if group.notes else 15000)
        w.show_tab("Runs")
        w.runs.refresh()
        return group

    def launch(self, config: RunConfig, preset: str | None = None, warnings: list[str] | tuple[str, ...] = (),
               estimate: FitEstimate | None = None) -> Path | None:
        """Create a run for ``config``, start its worker detached and follow it.

        A config whose env is code (``env.entry_point``) from a module not yet trusted asks first:
        "this preset runs code from MODULE" (``core.config.trust``); the answer is remembered.
        """
        if not self.confirm_code(config, preset):
            return None
        from core.launch.start import start_run

        w = self.window
        try:  # a custom env is imported from the folder the window was started in, for a resume too
            started = start_run(w.store, config, preset, warnings, import_folder=os.getcwd())
        except Exception as exc:  # noqa: BLE001 (show why the launch failed, keep the window)
            QMessageBox.warning(self.parent, "Launch failed", f"The run could not be started:\n{exc}")
            return None
        run_dir, notes = started.run_dir, started.notes
        w.follow_run(run_dir, estimate=estimate)
        w.statusBar().showMessage(f"Launched {run_dir.name}" + "".join(f"; warning: {n}" for n in notes),
                                  30000 if notes else 8000)
        w.show_tab("Monitor")
        w.runs.refresh()
        return run_dir

    def confirm_code(self, config: RunConfig, preset: str | None = None) -> bool:
        """Whether the run may import its code (the env's entry point, an own network): trusted already, or the
        user says yes now, module by module."""
        for module in config_modules(config):
            if is_trusted(module):
                continue
            what = f"The preset {preset}" if preset else "This config"
            refs = (config.env.entry_point, *config.policy.code)
            names = ", ".join(ref for ref in refs if ref and ref.startswith(module + ":"))
            answer = QMessageBox.question(
                self.parent, "This preset runs code",
                f"{what} runs code from {module} ({names}).\n\n"
                f"rlpanel imports it only to train. Run code from {module} now and from now on?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
            if answer != QMessageBox.StandardButton.Yes:
                self.window.statusBar().showMessage(f"Not launched: {module} is not trusted", 8000)
                return False
            trust(module)
        return True

    # --- stop, resume, restart -------------------------------------------------------------------

    def stop_run(self) -> None:
        w = self.window
        if w.run_dir is None or w.run_state not in ACTIVE:
            return
        self.stop_action.setEnabled(False)
        w.statusBar().showMessage(f"Stopping {w.run_dir.name}: asked it to save a checkpoint and stop...")
        w.stop_followed(STOP_TIMEOUT_S)

    def stop_finished(self, how: str) -> None:
        w = self.window
        name = w.run_dir.name if w.run_dir else "the run"
        words = STATUS_WORDS.get(how, how)
        if how == "terminated" and w.run_dir is not None:  # what Resume can do now, never a checkpoint it does not have
            from core.run.reached import checkpoint_step

            step = checkpoint_step(w.run_dir)
            words += (f"; Resume goes on from its checkpoint at step {step:,}" if step is not None
                      else "; it has no checkpoint: Restart trains it again from step 0")
        self.stop_words[name] = words  # the status change may arrive after this
        w.statusBar().showMessage(f"{name} {self.stop_words[name]}", 15000)
        w.runs.refresh()
        w.update_actions()

    def _resume_target(self) -> None:
        info = self.target()
        if info is not None and info.state in RESUMABLE and info.has_checkpoint:
            self.resume_run(info.path)

    def _restart_target(self) -> None:
        info = self.target()
        if info is not None and info.state in TERMINAL:
            self.restart_run(info.path)

    def _failed(self, title: str, text: str) -> None:
        QMessageBox.warning(self.parent, title, text)

    def resume_run(self, run_dir: Path) -> None:
        from core.launch.control import RunStateError, is_cluster_run, resume_run

        run_dir = Path(run_dir)
        if is_cluster_run(run_dir):  # a submission through Ray's job API takes seconds: not on the GUI thread
            self.window.statusBar().showMessage(f"Submitting {run_dir.name} to its Ray cluster to resume...")
            run_in_background(lambda: resume_run(run_dir), lambda _: self._resumed(run_dir),
                              lambda why: self._failed("Resume failed", f"The run could not be resumed:\n{why}"))
            return
        try:
            resume_run(run_dir)
        except (RunStateError, OSError) as exc:
            self._failed("Resume failed", f"The run could not be resumed:\n{exc}")
            return
        self._resumed(run_dir)

    def _resumed(self, run_dir: Path) -> None:
        w = self.window
        w.follow_run(Path(run_dir))
        w.show_tab("Monitor")
        w.statusBar().showMessage(f"Resuming {Path(run_dir).name} from its latest checkpoint", 8000)
        w.runs.refresh()

    def restart_run(self, run_dir: Path, confirm: bool = True) -> bool:
        """The same config again from step 0 (after asking: the run's checkpoints are set aside)."""
        w = self.window
        run_dir = Path(run_dir)
        if confirm and w.confirm_close:
            answer = QMessageBox.question(
                self.parent, "Restart the run", f"Train {run_dir.name} again from step 0 with the same config?\n\n"
                "Its records so far move to metrics.superseded.jsonl and its checkpoints to checkpoints.superseded/ "
                "(nothing is deleted).")
            if answer != QMessageBox.StandardButton.Yes:
                return False
        from core.launch.control import RunStateError
        from core.launch.start import restart_run

        try:
            attempt = restart_run(run_dir)
        except (RunStateError, ValueError, OSError) as exc:
            self._failed("Restart failed", f"The run could not be restarted:\n{exc}")
            return False
        w.follow_run(run_dir)
        w.show_tab("Monitor")
        w.statusBar().showMessage(f"Restarted {run_dir.name} from step 0 (attempt {attempt})", 8000)
        w.runs.refresh()
        return True
