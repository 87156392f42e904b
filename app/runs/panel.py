"""The Runs tab: every run in the runs folder, refreshed every few seconds off the GUI thread.

The Group column names the group of seeds a run was launched in (``rlpanel train --seeds``, the Seeds
field, a queue job with seeds) and its seed; sorted by it, a group's runs stand together in seed order. It is
shown while some listed run belongs to a group, as ``rlpanel runs`` shows its GROUP column.

Sortable by every column (numbers as numbers), columns sized to what they hold, filtered by text
or by tag. A selected run can be opened, resumed (when it has a checkpoint) or restarted (when it
has none, or on purpose), renamed, tagged and annotated (``NotesBox``), shown in TensorBoard or
the file manager, and deleted to the system's trash.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, QUrl, Signal, SignalInstance
from PySide6.QtGui import QDesktopServices, QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from app.agent.menu import AgentMenu
from app.runs.notes_box import NotesBox
from app.runs.rows import COLUMNS, ID_ROLE, RUN_COLUMN, describe_failure, resumes_line, run_row
from app.settings import GRID_SETTING, get_setting
from app.threads.background import run_in_background
from app.widgets.elided_label import ElidedLabel
from app.widgets.name_combo import NameCombo
from app.widgets.toolbar import STRETCH, panel_toolbar
from app.widgets.tree import top_items
from core.run.layout import RunDir
from core.run.states import ACTIVE, FAILED, LIVE, RESUMABLE, TERMINAL
from core.run.store import RunInfo, RunStore
from core.util.files import tail_lines

# the agent's dialogs, Ray's job API and the run controls load when first used: the window's first frame waits for none
if TYPE_CHECKING:
    from app.agent.export_dialog import ExportDialog


def _open_watch(run_dir: Path, parent: QWidget) -> QWidget:
    from app.agent.watch_window import open_watch

    return open_watch(run_dir, parent)


def _open_record(run_dir: Path, parent: QWidget) -> QWidget:
    from app.agent.record_dialog import open_record

    return open_record(run_dir, parent)


def _open_hub(run_dir: Path, parent: QWidget) -> QWidget:
    from app.agent.hub_dialog import open_hub

    return open_hub(run_dir, parent)


def _open_sync(run_dir: Path, parent: QWidget) -> QWidget:
    from app.agent.sync_dialog import open_sync

    return open_sync(run_dir, parent)


REFRESH_MS = 3000
CLUSTER_CHECK_S = 10.0  # how often live runs on a Ray cluster are asked about (an HTTP call each)
LOG_LINES = 15
RUN_COLUMN_MAX_PX = 320  # a longer name elides (whole in its tooltip): the numbers after it stay in view
ALL_TAGS = "all tags"


def list_runs(store: RunStore) -> tuple[list[RunInfo], dict[str, list[str]]]:
    """Every run, and the end of the log of each crashed or failed one (read off the GUI thread)."""
    try:
        infos = store.list()
    except OSError:
        infos = []
    logs = {i.id: tail_lines(RunDir(i.path).worker_log, LOG_LINES) for i in infos if i.state in FAILED}
    return infos, logs


class RunsPanel(QWidget):
    """Signals carry the run's folder: ``open_requested``, ``resume_requested``, ``restart_requested``,
    ``tensorboard_requested``; ``selection_changed(RunInfo | None)``; ``refreshed(list[RunInfo])``."""

    open_requested = Signal(object)
    resume_requested = Signal(object)
    restart_requested = Signal(object)
    tensorboard_requested = Signal(object)
    selection_changed = Signal(object)  # RunInfo or None
    refreshed = Signal(object)

    def __init__(self, runs_dir: Path, parent: QWidget | None = None, list_now: bool = True):
        """``list_now=False``: the first listing waits for ``refresh()`` (the window's, after its first frame)."""
        super().__init__(parent)
        self.store = RunStore(runs_dir)
        self.infos: dict[str, RunInfo] = {}
        self._failure_logs: dict[str, list[str]] = {}
        self._busy = False
        self._settling = False
        self._settled_at = float("-inf")

        self.folder_label = ElidedLabel(f"Runs in {runs_dir}")  # a long path: its middle gives way, whole on hover
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter: name, id, algo, env, tag…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setMinimumWidth(260)
        self.filter_edit.textChanged.connect(lambda _t: self._apply_filter())
        self.tag_filter = NameCombo(10)  # the user's tags, up to 32 letters: the row and the tab are not as wide
        self.tag_filter.setToolTip("Only the runs with this tag")
        self.tag_filter.addItem(ALL_TAGS)
        self.tag_filter.currentTextChanged.connect(lambda _t: self._apply_filter())
        self._buttons()
        split = self._build_table_and_details()
        top = QHBoxLayout()
        top.addWidget(self.folder_label, 1)
        top.addWidget(self.filter_edit)
        top.addWidget(self.tag_filter)
        # what a narrow tab has no room for goes behind », the least used last: a row of buttons was squeezed below
        # their text ("TensorBoard" 79 px of 86) when Configure left the tabs their least width (window_state)
        actions = panel_toolbar("runsActions", (
            self.open_button, self.resume_button, self.restart_button, self.tensorboard_button, self.agent_button,
            self.folder_button, self.delete_button, STRETCH, self.refresh_button))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(actions)
        layout.addWidget(split, 1)

        self._timer = QTimer(self)
        self._timer.timeout.connect(self.refresh)
        self._timer.start(REFRESH_MS)
        self._update_buttons()
        if list_now:
            self.refresh()

    def _build_table_and_details(self) -> QSplitter:
        """The runs' table over the selected run's details (its error and log tail) and notes."""
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(COLUMNS.index("Age"), Qt.SortOrder.AscendingOrder)  # newest first
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)  # nothing is cut to "ra..."
        header.setSectionResizeMode(RUN_COLUMN, QHeaderView.ResizeMode.Interactive)  # sized by _fit_run_column
        header.setStretchLastSection(True)
        self._run_column_px: int | None = None  # the width _fit_run_column gave it (another: the user's drag)
        self.tree.itemDoubleClicked.connect(lambda item, _col: self.open_requested.emit(self.infos[item.data(0, ID_ROLE)].path))
        self.tree.itemSelectionChanged.connect(self._on_selection)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setPlaceholderText("Select a run. Crashed and failed runs show their error and the end of their log here.")
        self.notes = NotesBox()
        self.notes.saved.connect(lambda _id: self.refresh())
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.details)
        bottom.addWidget(self.notes)
        bottom.setStretchFactor(0, 3)
        bottom.setStretchFactor(1, 2)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        return split

    def _buttons(self) -> None:
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Show this run's plots and log (or double-click it)")
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("Continue a stopped, failed or crashed run from its latest checkpoint")
        self.restart_button = QPushButton("Restart")
        self.restart_button.setToolTip("Train an ended run again from step 0 with the same config (a run without a "
                                       "checkpoint cannot resume); its old curve is kept as superseded")
        self.tensorboard_button = QPushButton("TensorBoard")
        self.tensorboard_button.setToolTip("Open this run's logs in TensorBoard (started on 127.0.0.1, a free port)")
        self.agent_button = AgentMenu(self)  # the agent's tools add their entries (app/agent/menu.py)
        self.evaluate_action = self.agent_button.add(
            "Evaluate…", "Play N episodes of a checkpoint (last, best or a kept step) and keep the mean reward",
            self.evaluate_selected)
        self.export_action = self.agent_button.add(
            "Export policy…", "Write the selected run's policy as an ONNX or TorchScript file: raw observations in, the "
            "env's own actions out", self.export_policy)
        self.agent_button.add("Watch", "Watch the agent play a checkpoint in a window of its own, at the env's frame rate",
                              lambda: self._open_agent_tool(_open_watch))
        self.agent_button.add("Record…", "Record a video (MP4 or GIF) of the agent playing a checkpoint, or every "
                              "checkpoint in turn", lambda: self._open_agent_tool(_open_record))
        self.agent_button.add("Hub…", "Write the agent as a Hugging Face Hub model folder (model, config, evaluation, "
                              "replay, model card) and push it", lambda: self._open_agent_tool(_open_hub))
        self.sync_action = self.agent_button.add(
            "Sync…", "Copy the run into MLflow or Weights & Biases (params, every record, checkpoints); only what is "
            "new on a second sync", lambda: self._open_agent_tool(_open_sync))
        self.folder_button = QPushButton("Show folder")
        self.folder_button.setToolTip("Open this run's folder in the file manager (config, logs, checkpoints, model)")
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setToolTip("Move this ended run's folder to the system's trash (restore it from there)")
        self.refresh_button = QPushButton("Refresh")
        self.open_button.clicked.connect(lambda: self._emit_selected(self.open_requested))
        self.resume_button.clicked.connect(lambda: self._emit_selected(self.resume_requested))
        self.restart_button.clicked.connect(lambda: self._emit_selected(self.restart_requested))
        self.tensorboard_button.clicked.connect(lambda: self._emit_selected(self.tensorboard_requested))
        self.folder_button.clicked.connect(self.show_folder)
        self.delete_button.clicked.connect(lambda: self.delete_selected())
        self.refresh_button.clicked.connect(self.refresh)

    def _open_agent_tool(self, open_tool: Callable[[Path, QWidget], QWidget]) -> None:
        """Open an agent tool's window for the selected run (kept as ``agent_window``)."""
        info = self.selected_info()
        if info is not None:
            self.agent_window = open_tool(info.path, self)

    def refresh(self) -> None:
        """List the runs on a worker thread (reading many folders may take a moment)."""
        if self._busy:
            return
        self._busy = True
        run_in_background(lambda: list_runs(self.store), self._show, self._list_failed)

    def _settle_cluster_runs(self, infos: list[RunInfo]) -> None:
        """Ask Ray about live runs on a cluster (every ``CLUSTER_CHECK_S``, off the GUI thread): a job that ended
        without its run saying so (a node lost) shows as crashed, as a local worker gone does."""
        live = [i.path for i in infos if i.state in LIVE and i.status.ray]
        if not live or self._settling or time.monotonic() - self._settled_at < CLUSTER_CHECK_S:
            return
        self._settling = True

        def done(_result: object) -> None:
            self._settling = False
            self._settled_at = time.monotonic()

        from core.cluster.jobs import settle_cluster_run

        run_in_background(lambda: [settle_cluster_run(p) for p in live], done, done)

    def _list_failed(self, message: str) -> None:
        self._busy = False
        self.folder_label.setText(f"Could not list the runs ({message}) in {self.store.root}")

    def _show(self, listing: tuple[list[RunInfo], dict[str, list[str]]]) -> None:
        infos, logs = listing
        self._busy = False
        self._settle_cluster_runs(infos)
        selected = self.selected_info()
        self.infos = {i.id: i for i in infos}
        self._failure_logs = logs
        self.tree.setUpdatesEnabled(False)
        self.tree.setSortingEnabled(False)
        self.tree.clear()
        now, grid = time.time(), get_setting(GRID_SETTING, 0.0) or None
        for info in infos:
            item = run_row(info, now, grid)
            self.tree.addTopLevelItem(item)
            if selected is not None and info.id == selected.id:
                item.setSelected(True)
        self.tree.setSortingEnabled(True)  # sorts by the header's column and order, as the user left them
        # the Group column only while some run was launched in a group (the width goes to the others otherwise)
        self.tree.setColumnHidden(COLUMNS.index("Group"), not any((i.status.group or {}).get("id") for i in infos))
        self._fit_run_column()
        self.tree.setUpdatesEnabled(True)
        self._fill_tags(infos)
        self._apply_filter()
        self._on_selection()
        self.refreshed.emit(infos)

    def _fit_run_column(self) -> None:
        """The Run column as wide as its longest name, up to ``RUN_COLUMN_MAX_PX``; a width the user dragged is kept."""
        if self._run_column_px is not None and self.tree.columnWidth(RUN_COLUMN) != self._run_column_px:
            return
        width = min(max(self.tree.sizeHintForColumn(RUN_COLUMN), self.tree.header().sectionSizeHint(RUN_COLUMN)),
                    RUN_COLUMN_MAX_PX)
        self.tree.setColumnWidth(RUN_COLUMN, width)
        self._run_column_px = width

    def _fill_tags(self, infos: list[RunInfo]) -> None:
        tags = sorted({t for i in infos for t in i.tags}, key=str.lower)
        current = self.tag_filter.currentText()
        if [self.tag_filter.itemText(i) for i in range(1, self.tag_filter.count())] == tags:
            return
        self.tag_filter.blockSignals(True)
        self.tag_filter.clear()
        self.tag_filter.addItem(ALL_TAGS)
        self.tag_filter.addItems(tags)
        self.tag_filter.setCurrentText(current if current in tags else ALL_TAGS)
        self.tag_filter.blockSignals(False)

    def set_tag_filter(self, tag: str | None) -> None:
        self.tag_filter.setCurrentText(tag or ALL_TAGS)

    def _apply_filter(self) -> None:
        words = self.filter_edit.text().lower().split()
        tag = self.tag_filter.currentText()
        for item in top_items(self.tree):
            info = self.infos.get(item.data(0, ID_ROLE))
            if info is None:
                continue
            group = info.status.group or {}
            text = " ".join([info.id, info.label, info.algo, info.env, info.state, *info.tags, info.note,
                             str(group.get("id") or ""), str(group.get("name") or "")]).lower()
            hidden = (tag != ALL_TAGS and tag not in info.tags) or not all(w in text for w in words)
            item.setHidden(hidden)

    def visible_ids(self) -> list[str]:
        """The listed runs in their shown order (sorted, filtered)."""
        return [it.data(0, ID_ROLE) for it in top_items(self.tree) if not it.isHidden()]

    def selected_info(self) -> RunInfo | None:
        items = self.tree.selectedItems()
        return self.infos.get(items[0].data(0, ID_ROLE)) if items else None

    def select(self, run_id: str) -> None:
        for item in top_items(self.tree):
            item.setSelected(item.data(0, ID_ROLE) == run_id)

    def evaluate_selected(self) -> None:
        """Open Evaluate... for the selected run (modeless: the window goes on; ``evaluate_dialog`` while open)."""
        info = self.selected_info()
        if info is None:
            return
        from app.agent.evaluate_dialog import EvaluateDialog

        self.evaluate_dialog = EvaluateDialog(info.path, info.label, self)
        self.evaluate_dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.evaluate_dialog.show()

    def show_folder(self) -> bool:
        """Open the selected run's folder with the desktop's file manager."""
        info = self.selected_info()
        return info is not None and QDesktopServices.openUrl(QUrl.fromLocalFile(str(info.path)))

    def export_policy(self) -> ExportDialog | None:
        """Export policy… for the selected run (the dialog, shown; None without a run)."""
        info = self.selected_info()
        if info is None:
            return None
        from app.agent.export_dialog import ExportDialog

        dialog = ExportDialog(info.path, parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def delete_selected(self, confirm: bool = True) -> bool:
        """Move the selected ended run to the system's trash, after asking."""
        info = self.selected_info()
        if info is None or info.state in ACTIVE:
            return False
        if confirm:
            answer = QMessageBox.question(self, "Delete run", f"Move {info.label} ({info.id}) to the trash?\n\n"
                                          "Its folder can be restored from the system's trash.")
            if answer != QMessageBox.StandardButton.Yes:
                return False
        self.delete_button.setEnabled(False)
        from core.launch.control import delete_run

        run_in_background(lambda: delete_run(info.path), lambda _r: self._deleted(info),
                          lambda message: self._delete_failed(info, message))
        return True

    def _deleted(self, info: RunInfo) -> None:
        self.details.setPlainText(f"Moved {info.id} to the trash.")
        self.refresh()

    def _delete_failed(self, info: RunInfo, message: str) -> None:
        self.details.setPlainText(f"{info.id} was not deleted: {message}")
        self._update_buttons()

    def _emit_selected(self, signal: SignalInstance) -> None:
        info = self.selected_info()
        if info is not None:
            signal.emit(info.path)

    def _on_selection(self) -> None:
        info = self.selected_info()
        self._update_buttons()
        self.notes.show_run(info)
        ckpt = ("\nno checkpoint to resume from: Restart trains it again from step 0"
                if info is not None and info.state in RESUMABLE and not info.has_checkpoint else "")
        if info is None:
            self.details.clear()
        elif info.broken:
            self.details.setPlainText(f"{info.id} cannot be read as a run: {info.broken}\n{info.path}\n"
                                      "The files are left as they are: fix or remove them in the folder.")
        elif info.state in FAILED:
            self.details.setPlainText(describe_failure(info, self._failure_logs.get(info.id, [])) + ckpt)
        else:
            extra = f", pid {info.pid}" if info.state in ACTIVE and info.pid else ""
            paused = f"\npaused: {info.pause_reason}" if info.pause_reason else ""
            resumed = f"\n{line}" if (line := resumes_line(info)) else ""
            self.details.setPlainText(f"{info.id} {info.state}{extra}{paused}{resumed}\n{info.path}{ckpt}")
        self.selection_changed.emit(info)

    def _update_buttons(self) -> None:
        info = self.selected_info()
        for b in (self.open_button, self.folder_button, self.tensorboard_button):
            b.setEnabled(info is not None)
        self.resume_button.setEnabled(info is not None and info.state in RESUMABLE and info.has_checkpoint)
        self.restart_button.setEnabled(info is not None and info.state in TERMINAL)
        self.delete_button.setEnabled(info is not None and info.state not in ACTIVE)
        self.agent_button.setEnabled(info is not None and info.has_checkpoint)
        if info is not None and info.state in RESUMABLE and not info.has_checkpoint:
            self.resume_button.setToolTip("This run saved no checkpoint: Restart trains it again from step 0")
        else:
            self.resume_button.setToolTip("Continue a stopped, failed or crashed run from its latest checkpoint")

    def on_shown(self) -> None:
        """Nothing to do: the window has the runs listed when they change."""

    def on_closing(self) -> None:
        """Nothing of its own to stop."""
