"""Sync…: the selected run copied into MLflow or W&B, with ``rlpanel sync``'s options.

The sync is ``rlpanel sync RUN --to ... --json`` as a child process (the window never imports mlflow or wandb),
waited for on a pool thread (``run_in_background``); with "Keep syncing" it follows a live run until it ends,
and closing the dialog ends it. The fields start from the user's ``sync.yaml`` (``core.sync.settings``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.threads.background import run_in_background
from app.widgets.wrap_label import WrapLabel
from core.config.errors import one_line
from core.sync.settings import WANDB_DIR, SyncSettings, default_mlflow_uri, load_sync_settings
from core.sync.source import SyncError
from core.util.console import utf8_env
from core.util.paths import CODE_ROOT

TARGETS = (("MLflow", "mlflow"), ("Weights & Biases", "wandb"))


def sync_args(run_dir: Path, target: str, *, uri: str = "", name: str = "", folder: str = "", online: bool = False,
              follow: bool = False, remember: bool = False) -> list[str]:
    """``rlpanel sync``'s arguments for the dialog's choices (an empty field: the command's default)."""
    args = ["sync", Path(run_dir).name, "--runs-dir", str(Path(run_dir).parent), "--to", target, "--json"]
    if target == "mlflow":
        args += (["--uri", uri] if uri else []) + (["--experiment", name] if name else [])
    else:
        args += (["--project", name] if name else []) + (["--dir", folder] if folder else [])
        args += ["--online"] if online else []
    return args + (["--follow"] if follow else []) + (["--remember"] if remember else [])


class SyncDialog(QDialog):
    """Emits ``synced`` with the command's JSON, or ``failed`` with its one-line error."""

    synced = Signal(dict)
    failed = Signal(str)

    def __init__(self, run_dir: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.run_dir = Path(run_dir)
        self.proc: subprocess.Popen[str] | None = None
        self.setWindowTitle(f"Sync {self.run_dir.name}")
        self._build_fields(self._settings())
        self._build_layout()
        self.target_box.currentIndexChanged.connect(self._show_target)
        self._show_target()

    def _settings(self) -> SyncSettings:
        try:
            return load_sync_settings()
        except SyncError:  # the command says what is wrong with sync.yaml when it runs
            return SyncSettings()

    def _build_fields(self, settings: SyncSettings) -> None:
        self.target_box = QComboBox()
        for text, target in TARGETS:
            self.target_box.addItem(text, target)
        self.uri_edit = QLineEdit(settings.mlflow.uri or "")
        self.uri_edit.setPlaceholderText(default_mlflow_uri(self.run_dir.parent))
        self.uri_edit.setToolTip("MLflow's tracking URI: a server's http://HOST:5000, or a SQLite file (empty: the "
                                 "store beside the runs folder, which mlflow ui --backend-store-uri opens)")
        self.experiment_edit = QLineEdit(settings.mlflow.experiment)
        self.project_edit = QLineEdit(settings.wandb.project)
        self.folder_edit = QLineEdit(settings.wandb.dir or "")
        self.folder_edit.setPlaceholderText(str(self.run_dir.parent / WANDB_DIR))
        self.folder_edit.setToolTip("Where W&B writes the offline run; wandb sync uploads it later")
        self.online_box = QCheckBox("Send online now (needs wandb login first)")
        self.online_box.setChecked(settings.wandb.online)
        self.follow_box = QCheckBox("Keep syncing while the run trains, until it ends")
        self.remember_box = QCheckBox("Remember as the default (also where runtime.sync sends runs)")
        self.message = WrapLabel("Sends the config as params, every record as metrics at its step, tags and the "
                                 "config, summary and checkpoints as files; a second sync sends only what is new.")

    def _build_layout(self) -> None:
        self.form = QFormLayout()
        self.form.addRow("To", self.target_box)
        self.form.addRow("Tracking URI", self.uri_edit)
        self.form.addRow("Experiment", self.experiment_edit)
        self.form.addRow("Project", self.project_edit)
        self.form.addRow("Folder", self.folder_edit)
        self.form.addRow("", self.online_box)
        self.form.addRow("", self.follow_box)
        self.form.addRow("", self.remember_box)
        self.buttons = QDialogButtonBox()
        self.sync_button = self.buttons.addButton("Sync", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.sync_button.clicked.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self.resize(620, self.sizeHint().height())

    @property
    def target(self) -> str:
        return str(self.target_box.currentData())

    def _show_target(self) -> None:
        mlflow = self.target == "mlflow"
        for widget, shown in ((self.uri_edit, mlflow), (self.experiment_edit, mlflow), (self.project_edit, not mlflow),
                              (self.folder_edit, not mlflow), (self.online_box, not mlflow)):
            self.form.setRowVisible(widget, shown)

    def args(self) -> list[str]:
        mlflow = self.target == "mlflow"
        return sync_args(self.run_dir, self.target, uri=self.uri_edit.text().strip(),
                         name=(self.experiment_edit if mlflow else self.project_edit).text().strip(),
                         folder=self.folder_edit.text().strip(), online=self.online_box.isChecked(),
                         follow=self.follow_box.isChecked(), remember=self.remember_box.isChecked())

    def start(self) -> None:
        """Start the sync off the GUI thread."""
        self.sync_button.setEnabled(False)
        following = self.follow_box.isChecked()
        self.message.setText("Syncing… it follows the run until it ends (closing this ends it)." if following else
                             "Syncing…")
        self.proc = subprocess.Popen([sys.executable, "-m", "core.cli", *self.args()], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, encoding="utf-8",
                                     env=utf8_env(os.environ), cwd=str(CODE_ROOT))
        proc = self.proc
        run_in_background(lambda: proc.communicate() + (proc.returncode,), self._done, self._failed)

    def _done(self, answer: tuple[str, str, int]) -> None:
        out, err, code = answer
        self.proc = None
        self.sync_button.setEnabled(True)
        try:
            data: dict[str, Any] = json.loads(out) if out.strip() else {}
        except ValueError:
            data = {}
        errors = [one_line(line.removeprefix("rlpanel sync: ")) for line in err.splitlines() if line.strip()]
        if code != 0 or not data.get("runs"):
            self._failed(errors[-1] if errors else f"rlpanel sync ended with code {code}")
            return
        run = data["runs"][0]
        sent = f"{run['points']:,} values of {run['records']:,} records" if run["records"] or run["points"] else "nothing new"
        self.message.setText(f"Synced: {sent}, {len(run['artifacts'])} files. Open it: {run['where']}")
        self.synced.emit(data)

    def _failed(self, message: str) -> None:
        self.proc = None
        self.sync_button.setEnabled(True)
        self.message.setText(f"Not synced: {message}")
        self.failed.emit(message)

    def done(self, result: int) -> None:
        """Closing ends a sync that is still following the run (the run itself goes on)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        super().done(result)


def open_sync(run_dir: Path, parent: QWidget | None = None) -> SyncDialog:
    """The Agent menu's Sync…: a dialog that stays open beside the window (not modal) while it syncs."""
    dialog = SyncDialog(run_dir, parent)
    dialog.show()
    return dialog
