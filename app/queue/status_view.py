"""The queue as its runner sees it: each job's status, run, node (on a Ray cluster), elapsed time and reason; Cancel, Continue.

Watches ``<runs>/.queue/state.json`` once a second (a small file: cheap on the GUI thread), so it
shows a queue started by ``rlpanel queue run`` or an earlier window as well as one started here.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.theme import QUEUE_STATUS_COLORS, status_color
from app.widgets.toolbar import panel_toolbar
from app.widgets.tree import top_items
from app.widgets.wrap_label import wrap_long_words
from core.queue import autostart
from core.queue.control import CONTINUABLE, QueueBusy, cancel_queue, start_queue
from core.queue.plan import Plan
from core.queue.record import WAITING, QueueJob, QueueState
from core.queue.state import is_active, pending_after, read_queue, summary_line
from core.run.layout import RunDir
from core.run.names import read_run_label
from core.util.text import clock

POLL_MS = 1000
COLUMNS = ["Job", "Status", "Run", "Node", "Elapsed", "Reason"]
def fit_columns(tree: QTreeWidget, padding: int = 14) -> None:
    """Columns as wide as their contents plus some air (the last one stretches); the user may resize."""
    for col in range(tree.columnCount() - 1):
        tree.resizeColumnToContents(col)
        tree.setColumnWidth(col, tree.columnWidth(col) + padding)


def job_reason(state: QueueState, job: QueueJob) -> str:
    """The runner's reason, or for a waiting job what it waits for."""
    if job.reason:
        return job.reason
    if job.status == WAITING and state.state in ("running", "cancelling"):
        pending = pending_after(state, job.name)
        return f"waiting for {', '.join(pending)}" if pending else "waiting for a free slot"
    return ""


CONTINUE_TIP = "Start the queue runner again: it adopts the jobs already launched and runs the rest"


def continue_blocked(state: QueueState | None, runs_dir: Path) -> str | None:
    """Why Continue has nothing to do (None: the queue's runner is gone mid-plan, which Continue starts again)."""
    if state is None:
        return f"No queue in {runs_dir} to continue: build a plan above and press Start"
    if state.state == "crashed":
        return None
    if is_active(state):
        return f"Queue {state.id} is {state.state}: its runner is alive, there is nothing to continue"
    again = "; Start with the same plan runs its unfinished jobs again" if state.state in CONTINUABLE else ""
    return f"Queue {state.id} has ended ({state.state}): Continue is for a queue whose runner is gone{again}"


class QueueStatusView(QWidget):
    """Signals: ``run_activated(Path)`` on double-click of a job with a run; ``state_changed(QueueState | None)``."""

    run_activated = Signal(object)
    state_changed = Signal(object)

    def __init__(self, runs_dir: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.runs_dir = Path(runs_dir)
        self.state: QueueState | None = None
        self._labels: dict[str, tuple[int, str]] = {}  # run id -> (annotations.json's mtime, its name)
        self.header = wrap_long_words(QLabel())  # "No queue in <runs folder> yet", the runner's error
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(True)
        self.tree.header().setStretchLastSection(True)
        self.tree.itemDoubleClicked.connect(self._activated)
        self.tree.setToolTip("Double-click a job to open its run")
        self.cancel_button = QPushButton("Cancel queue")
        self.cancel_button.setToolTip("Launch no more jobs; running jobs finish unless the box is ticked")
        self.stop_running = QCheckBox("stop running jobs too")
        self.continue_button = QPushButton("Continue")
        self.message = wrap_long_words(QLabel())  # an OSError names its file
        self.cancel_button.clicked.connect(self.cancel)
        self.continue_button.clicked.connect(self.continue_queue)

        row = panel_toolbar("queueButtons", (self.cancel_button, self.stop_running, self.continue_button))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(self.tree, 1)
        layout.addWidget(row)
        layout.addWidget(self.message)
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        self.refresh()

    def refresh(self) -> None:
        state = read_queue(self.runs_dir)
        changed = state != self.state
        self.state = state
        self._show(state)
        if changed:
            self.state_changed.emit(state)

    def is_running(self) -> bool:
        return is_active(self.state)

    # --- actions -------------------------------------------------------------------------------

    def cancel(self) -> bool:
        try:
            cancel_queue(self.runs_dir, self.stop_running.isChecked())
        except LookupError as exc:
            self.say(str(exc))
            return False
        what = "running jobs are asked to stop" if self.stop_running.isChecked() else "running jobs finish"
        self.say(f"Cancelled: no more launches; {what}")
        self.refresh()
        return True

    def continue_queue(self) -> bool:
        """What ``rlpanel queue run`` on the same plan does after a runner crash."""
        state = self.state
        if not state or state.state != "crashed":
            return False
        try:
            _, note = start_queue(self.runs_dir, Plan.model_validate(state.plan),
                                  Path(state.plan_path) if state.plan_path else None, reap=True)
        except (QueueBusy, OSError) as exc:
            self.say(str(exc))
            return False
        self.say(note[:1].upper() + note[1:])
        self.refresh()
        return True

    def say(self, text: str) -> None:
        self.message.setText(text)

    # --- view ----------------------------------------------------------------------------------

    def _show(self, state: QueueState | None) -> None:
        self.cancel_button.setEnabled(state is not None and state.state in ("running", "crashed"))
        self.stop_running.setEnabled(self.cancel_button.isEnabled())
        # disabled with the reason, not hidden: a widget in a toolbar row shows whatever its own visibility says
        blocked = continue_blocked(state, self.runs_dir)
        self.continue_button.setEnabled(blocked is None)
        self.continue_button.setToolTip(blocked or CONTINUE_TIP)
        if not state:
            self.header.setText(f"No queue in {self.runs_dir} yet: build a plan above and press Start.")
            self.header.setStyleSheet("")
            self.tree.clear()
            return
        text = (f"Queue {state.id}: {state.state} ({summary_line(state)}); "
                f"parallel {state.parallel}, on failure {state.on_failure}")
        if state.ray:
            text += f"; on the Ray cluster {state.ray.get('address')}"
        entry = autostart.standing_entry(state)
        if entry is not None:
            text += f"; resumes after a restart: {entry.describe()}"
        if state.state == "crashed":
            text += ". Its runner is gone: Continue starts it again where it was (no job runs twice)."
        elif state.state == "failed" and state.error:
            text += f". The runner failed: {state.error}"
        self.header.setText(text)
        known = state.state in QUEUE_STATUS_COLORS
        self.header.setStyleSheet(f"color: {status_color(self, state.state).name()}" if known else "")
        names = [j.name for j in state.jobs]
        if [item.text(0) for item in top_items(self.tree)] != names:
            self.tree.clear()  # another queue: new rows (same queue: update in place, keeping the selection)
            for name in names:
                QTreeWidgetItem(self.tree, [""] * len(COLUMNS)).setText(0, name)
        now = time.time()
        grew = False
        for item, job in zip(top_items(self.tree), state.jobs, strict=True):
            elapsed = ""
            if job.started_at:
                elapsed = clock((job.ended_at or now) - job.started_at)
            node = job.node or ("cluster" if state.ray and job.run_id else "")
            values = [job.name, job.status, self._run_label(job.run_id), node, elapsed, job_reason(state, job)]
            for col, value in enumerate(values):
                if item.text(col) != value:
                    grew |= col != COLUMNS.index("Elapsed")
                    item.setText(col, value)
            item.setForeground(1, status_color(self, job.status))
            item.setData(0, Qt.ItemDataRole.UserRole, job.run_id)
            item.setToolTip(COLUMNS.index("Reason"), values[-1])
            item.setToolTip(COLUMNS.index("Run"), job.run_id or "")
        if grew:
            fit_columns(self.tree)

    def _run_label(self, run_id: str | None) -> str:
        """The run's name as every list shows it (core.run.names), read again only when its annotations change."""
        if not run_id:
            return ""
        run_dir = self.runs_dir / run_id
        try:
            stamp = RunDir(run_dir).annotations.stat().st_mtime_ns
        except OSError:
            stamp = 0
        cached = self._labels.get(run_id)
        if cached is None or cached[0] != stamp:
            cached = (stamp, read_run_label(run_dir))
            if cached[1] != run_id:  # the id alone: its config may not be written yet, read it again next time
                self._labels[run_id] = cached
        return cached[1]

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        run_id = item.data(0, Qt.ItemDataRole.UserRole)
        if run_id:
            self.run_activated.emit(self.runs_dir / run_id)
