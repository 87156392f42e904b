"""The Queue tab: build the night's plan from the Configure tab, start it, watch it.

The plan runs in a detached queue runner (``core.queue.runner``), as with ``rlpanel queue run``:
closing the window does not stop it, and a new window shows it again. "Resume after a restart" is
``--survive-reboot``: a start-up entry that resumes the queue when the user logs in after a restart.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QGroupBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from app.configure.model import ConfigModel
from app.queue.plan_editor import PlanEditor
from app.queue.status_view import QueueStatusView
from app.theme import error_color
from app.widgets.cluster_field import ClusterField
from app.widgets.fit_list import FitList
from app.widgets.wrap_label import wrap_long_words
from core.cluster.client import ClusterError
from core.config.errors import ConfigError
from core.queue.autostart import AutostartError, Host
from core.queue.control import QueueBusy, start_queue
from core.queue.plan import parse_plan
from core.queue.record import QueueState
from core.queue.state import summary_line


class QueuePanel(QWidget):
    """Plan editor over the live queue view.

    Signals: ``run_activated(Path)`` when a job's row with a run is double-clicked;
    ``queue_started(QueueState)`` after Start launched a runner; ``state_changed(QueueState | None)``.
    """

    run_activated = Signal(object)
    queue_started = Signal(object)
    state_changed = Signal(object)

    def __init__(self, runs_dir: Path, config: ConfigModel | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.runs_dir = Path(runs_dir)
        self.editor = PlanEditor(config)
        self.status_view = QueueStatusView(self.runs_dir)
        self.status_view.run_activated.connect(self.run_activated)
        self.status_view.state_changed.connect(self._queue_changed)
        self.editor.changed.connect(self._plan_edited)

        self.start_button = QPushButton("Start")
        self.start_button.setToolTip("Check the plan and start it in a detached queue runner")
        self.start_button.clicked.connect(self.start)
        self.survive_reboot = survive_reboot_box(Host())
        self.start_note = wrap_long_words(QLabel())  # the start note: the queue's id, the Ray address, the start-up entry
        self.errors_list = FitList(max_height=160)  # as tall as its lines (up to about five)
        self.errors_list.hide()
        self.cluster = ClusterField()

        plan_box = QGroupBox("Plan")
        plan_layout = QVBoxLayout(plan_box)
        plan_layout.addWidget(self.editor, 1)
        plan_layout.addWidget(self.errors_list)
        plan_layout.addWidget(self.cluster)
        start_row = QHBoxLayout()
        start_row.addWidget(self.start_button)
        start_row.addWidget(self.survive_reboot)
        start_row.addWidget(self.start_note, 1)
        plan_layout.addLayout(start_row)
        queue_box = QGroupBox("Queue")
        queue_layout = QVBoxLayout(queue_box)
        queue_layout.addWidget(self.status_view)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(plan_box)
        split.addWidget(queue_box)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split)
        self._queue_changed(self.status_view.state)

    @property
    def state(self) -> QueueState | None:
        """The queue's state as last read (None: no queue in this runs folder)."""
        return self.status_view.state

    def refresh(self) -> None:
        self.status_view.refresh()

    def start(self) -> bool:
        """Validate the plan (errors listed by job and field) and start it; returns whether it started."""
        self.status_view.refresh()
        if (state := self.status_view.state) is not None and self.status_view.is_running():
            self._show_errors([f"Queue {state.id} is still running ({summary_line(state)}): "
                               "cancel it or wait for it to end before starting another"])
            return False
        if not self.editor.jobs:
            self._show_errors(["The plan has no jobs: add the current config or a baseline first"])
            return False
        try:
            plan = parse_plan(self.editor.plan_raw())
        except ConfigError as exc:
            self._show_errors([f"{issue.path}: {issue.message}" for issue in exc.issues])
            return False
        try:
            cluster = self.cluster.target()
        except ClusterError as exc:
            self._show_errors([f"Ray cluster: {exc}"])
            return False
        try:
            # a custom env is imported from the window's working folder, as for the runs its Launch starts
            state, note = start_queue(self.runs_dir, plan, self.editor.saved_path(), reap=True, cluster=cluster,
                                      survive_reboot=self.survive_reboot.isChecked(), import_folder=os.getcwd())
        except AutostartError as exc:
            self._show_errors([f"Resume after a restart: {exc}; the queue was not started (untick the box to start it)"])
            return False
        except (QueueBusy, OSError) as exc:
            self._show_errors([str(exc)])
            return False
        self._show_errors([])
        self.start_note.setText(note[:1].upper() + note[1:])
        self.status_view.refresh()
        self.queue_started.emit(state)
        return True

    def errors(self) -> list[str]:
        """What the error list shows (empty when the last Start was accepted)."""
        return [self.errors_list.item(i).text() for i in range(self.errors_list.count())]

    def _show_errors(self, lines: list[str]) -> None:
        self.errors_list.clear()
        self.errors_list.addItems(lines)
        color = error_color(self)
        for i in range(self.errors_list.count()):
            self.errors_list.item(i).setForeground(color)
        self.errors_list.setVisible(bool(lines))
        self.errors_list.fit_height()
        if lines:
            self.start_note.setText("")

    def _plan_edited(self) -> None:
        if self.errors_list.count():
            self._show_errors([])  # the listed errors were about the plan as it was

    def _queue_changed(self, state: QueueState | None) -> None:
        running = state is not None and state.state in ("running", "cancelling")
        self.start_button.setToolTip("A queue is running in this runs folder: cancel it or wait for it to end"
                                     if running else "Check the plan and start it in a detached queue runner")
        self.state_changed.emit(state)

    def on_shown(self) -> None:
        """Nothing to do: the queue's state is shown as its runner writes it."""

    def on_closing(self) -> None:
        """Nothing to stop: the queue's runner goes on without the window."""


def survive_reboot_box(host: Host) -> QCheckBox:
    """"Resume after a restart": what the start-up entry is here, in its tooltip; disabled where there is none."""
    box = QCheckBox("Resume after a restart")
    if host.platform == "darwin":
        box.setEnabled(False)
        box.setToolTip("Not supported on macOS: after a restart, run rlpanel queue resume")
        return box
    where = ("a Task Scheduler task at log-on (or, if that is refused, a file in your Startup folder)" if host.windows
             else "an XDG autostart entry (~/.config/autostart)")
    box.setToolTip(f"Register {where} that resumes this queue when you log in after a restart (Windows Update "
                   "restarts machines at night); removed when the queue ends. As rlpanel queue run --survive-reboot")
    return box
