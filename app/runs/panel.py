"""The Runs tab: every run in the runs folder, refreshed every few seconds off the GUI thread."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices, QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.theme import state_color
from app.background import run_in_background
from core.run.layout import RunDir
from core.run.states import ACTIVE, FAILED, RESUMABLE
from core.run.store import RunInfo, RunStore
from core.util.files import tail_lines
from core.util.text import format_age

REFRESH_MS = 3000
LOG_LINES = 15
COLUMNS = ["Run", "State", "Algo", "Env", "Steps", "Mean reward", "Age"]


def list_runs(store: RunStore) -> tuple[list[RunInfo], dict[str, list[str]]]:
    """Every run, and the end of the log of each crashed or failed one (read off the GUI thread)."""
    try:
        infos = store.list()
    except OSError:
        infos = []
    logs = {i.id: tail_lines(RunDir(i.path).worker_log, LOG_LINES) for i in infos if i.state in FAILED}
    return infos, logs


def describe_failure(info: RunInfo, log_lines: list[str]) -> str:
    """What a user reads about a crashed or failed run: the error and the end of its log."""
    parts = [f"{info.id} {info.state}"]
    err = info.error or {}
    if err.get("message"):
        parts.append(f"error: {err['message']}")
    if err.get("traceback"):
        parts.append(str(err["traceback"]).rstrip())
    if log_lines:
        parts.append("--- last lines of worker.log ---")
        parts += log_lines
    return "\n".join(parts)


class RunsPanel(QWidget):
    """Signals: ``open_requested(Path)`` on double-click or Open, ``resume_requested(Path)``."""

    open_requested = Signal(object)
    resume_requested = Signal(object)
    selection_changed = Signal(object)  # RunInfo or None
    refreshed = Signal(object)

    def __init__(self, runs_dir: Path, parent=None):
        super().__init__(parent)
        self.store = RunStore(runs_dir)
        self.infos: dict[str, RunInfo] = {}
        self._failure_logs: dict[str, list[str]] = {}
        self._busy = False

        self.folder_label = QLabel(f"Runs in {runs_dir}")
        self.folder_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Show this run's plots and log (or double-click it)")
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("Continue a stopped, failed or crashed run from its latest checkpoint")
        self.refresh_button = QPushButton("Refresh")
        self.folder_button = QPushButton("Show folder")
        self.folder_button.setToolTip("Open this run's folder in the file manager (config, logs, checkpoints, model)")
        self.folder_button.clicked.connect(self.show_folder)
        self.open_button.clicked.connect(lambda: self._emit_selected(self.open_requested))
        self.resume_button.clicked.connect(lambda: self._emit_selected(self.resume_requested))
        self.refresh_button.clicked.connect(self.refresh)

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSortingEnabled(False)
        self.tree.itemDoubleClicked.connect(
            lambda item, _col: self.open_requested.emit(self.infos[item.data(0, Qt.ItemDataRole.UserRole)].path))
        self.tree.itemSelectionChanged.connect(self._on_selection)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setPlaceholderText("Select a run. Crashed and failed runs show their error and the end of their log here.")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.details)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)

        top = QHBoxLayout()
        top.addWidget(self.folder_label, 1)
        for b in (self.open_button, self.resume_button, self.folder_button, self.refresh_button):
            top.addWidget(b)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(split, 1)

        self._timer = QTimer(self)
        self._timer.timeout.connect(self.refresh)
        self._timer.start(REFRESH_MS)
        self._update_buttons()
        self.refresh()

    def refresh(self) -> None:
        """List the runs on a worker thread (reading many folders may take a moment)."""
        if self._busy:
            return
        self._busy = True

        run_in_background(lambda: list_runs(self.store), self._show, self._list_failed)

    def _list_failed(self, message: str) -> None:
        self._busy = False
        self.folder_label.setText(f"Runs in {self.store.root} (could not list them: {message})")

    def _show(self, listing: tuple[list[RunInfo], dict[str, list[str]]]) -> None:
        infos, logs = listing
        self._busy = False
        selected = self.selected_info()
        self.infos = {i.id: i for i in infos}
        self._failure_logs = logs
        self.tree.setUpdatesEnabled(False)
        self.tree.clear()
        now = time.time()
        for info in infos:
            reward = "" if info.mean_reward is None else f"{info.mean_reward:.2f}"
            steps = f"{info.steps:,}" + (f" / {info.total:,}" if info.total else "")
            age = format_age(now - (info.started_at or info.created_at or now))
            item = QTreeWidgetItem([info.id, info.state, info.algo, info.env, steps, reward, age])
            item.setData(0, Qt.ItemDataRole.UserRole, info.id)
            item.setForeground(1, state_color(info.state))
            if info.broken:
                item.setToolTip(0, f"cannot be read: {info.broken}")
                item.setToolTip(1, f"cannot be read: {info.broken}")
            elif info.state in FAILED and info.error:
                item.setToolTip(1, str(info.error.get("message", "")))
            for col in (4, 5, 6):
                item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.tree.addTopLevelItem(item)
            if selected is not None and info.id == selected.id:
                item.setSelected(True)
        self.tree.setUpdatesEnabled(True)
        if not self.tree.property("sized"):
            for col in range(len(COLUMNS)):
                self.tree.resizeColumnToContents(col)
            self.tree.setProperty("sized", bool(infos))
        self._on_selection()
        self.refreshed.emit(infos)

    def selected_info(self) -> RunInfo | None:
        items = self.tree.selectedItems()
        return self.infos.get(items[0].data(0, Qt.ItemDataRole.UserRole)) if items else None

    def select(self, run_id: str) -> None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            item.setSelected(item.data(0, Qt.ItemDataRole.UserRole) == run_id)

    def show_folder(self) -> bool:
        """Open the selected run's folder with the desktop's file manager."""
        info = self.selected_info()
        return info is not None and QDesktopServices.openUrl(QUrl.fromLocalFile(str(info.path)))

    def _emit_selected(self, signal) -> None:
        info = self.selected_info()
        if info is not None:
            signal.emit(info.path)

    def _on_selection(self) -> None:
        info = self.selected_info()
        self._update_buttons()
        if info is None:
            self.details.clear()
        elif info.broken:
            self.details.setPlainText(f"{info.id} cannot be read as a run: {info.broken}\n{info.path}\n"
                                      "The files are left as they are: fix or remove them in the folder.")
        elif info.state in FAILED:
            self.details.setPlainText(describe_failure(info, self._failure_logs.get(info.id, [])))
        else:
            extra = f", pid {info.pid}" if info.state in ACTIVE and info.pid else ""
            self.details.setPlainText(f"{info.id} {info.state}{extra}\n{info.path}")
        self.selection_changed.emit(info)

    def _update_buttons(self) -> None:
        info = self.selected_info()
        self.open_button.setEnabled(info is not None)
        self.folder_button.setEnabled(info is not None)
        self.resume_button.setEnabled(info is not None and info.state in RESUMABLE)
