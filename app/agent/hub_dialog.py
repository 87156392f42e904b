"""Hub…: a run's agent as a Hugging Face Hub model folder, and pushed when a repository is named (``rlpanel hub``).

The same options as the command: the checkpoint, the folder, the episodes of an evaluation made when the
checkpoint has none stored, the replay, the repository to push to. The folder is written by
``python -m core.agent.hub`` (``core.launch.agent_child``), waited for on a pool thread (``run_in_background``);
the dialog then shows what was written, or the tool's one line (a push that failed says the folder is written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QStandardPaths, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.agent.checkpoint_picker import CheckpointPicker
from app.threads.background import run_in_background
from app.widgets.wrap_label import WrapLabel
from core.launch.agent_child import run_policy_tool
from core.launch.agent_results import HUB_TIMEOUT_S, hub_folder_problem, hub_summary, repo_id_problem


def default_hub_folder(run_dir: Path) -> Path:
    """``<Documents or home>/<run id>-hub``."""
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    base = Path(folder) if folder and Path(folder).is_dir() else Path.home()
    return base / f"{Path(run_dir).name}-hub"


class HubDialog(QDialog):
    """``written`` carries the tool's JSON result, ``failed`` its one line."""

    written = Signal(dict)
    failed = Signal(str)

    def __init__(self, run_dir: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.run_dir = Path(run_dir)
        self.setWindowTitle(f"Hub model folder of {self.run_dir.name}")
        self.written_result: dict[str, Any] | None = None
        self.picker = CheckpointPicker(self.run_dir)
        self.folder_edit = QLineEdit(str(default_hub_folder(self.run_dir)))
        self.folder_edit.setToolTip("A new or empty folder: the model repository's files are written into it")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(browse)
        self.episodes = QSpinBox()
        self.episodes.setRange(1, 1000)
        self.episodes.setValue(10)
        self.episodes.setToolTip("Episodes of the evaluation made when the checkpoint has no stored one (Evaluate…)")
        self.replay_box = QCheckBox("Record one episode as replay.mp4 (shown on the model's page)")
        self.replay_box.setChecked(True)
        self.push_edit = QLineEdit()
        self.push_edit.setPlaceholderText("USER/NAME to upload (optional; needs huggingface_hub and hf auth login)")
        self.message = WrapLabel("")
        self.buttons = QDialogButtonBox()
        self.write_button = self.buttons.addButton("Write", QDialogButtonBox.ButtonRole.AcceptRole)
        self.open_button = self.buttons.addButton("Open folder", QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.setEnabled(False)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.write_button.clicked.connect(self.write)
        self.open_button.clicked.connect(self._open_folder)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Checkpoint", self.picker)
        form.addRow("Folder", folder_row)
        form.addRow("Evaluation episodes", self.episodes)
        form.addRow("", self.replay_box)
        form.addRow("Push to", self.push_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self.resize(660, self.sizeHint().height())

    def _browse(self) -> None:
        name = QFileDialog.getExistingDirectory(self, "Write the model folder into", self.folder_edit.text())
        if name:
            self.folder_edit.setText(name)

    def tool_args(self, overwrite: bool) -> list[str]:
        args = ["--checkpoint", self.picker.value(), "-o", self.folder_edit.text().strip(),
                "--episodes", str(self.episodes.value())]
        args += [] if self.replay_box.isChecked() else ["--no-replay"]
        args += ["--overwrite"] if overwrite else []
        push = self.push_edit.text().strip()
        return args + (["--push", push] if push else [])

    def write(self) -> None:
        """Write the folder off the GUI thread (asking first before files in it are replaced)."""
        folder = Path(self.folder_edit.text().strip()).expanduser()
        push = self.push_edit.text().strip()
        problem = ("Folder: give the whole path of the folder, e.g. with Browse…" if not folder.is_absolute()
                   else hub_folder_problem(folder, overwrite=False) or (repo_id_problem(push) if push else None))
        overwrite = False
        if problem and "holds files" in problem:
            answer = QMessageBox.question(self, "Replace the files?", f"{folder} holds files. Replace the model's files "
                                          "in it?")
            if answer != QMessageBox.StandardButton.Yes:
                return
            overwrite, problem = True, repo_id_problem(push) if push else None
        if problem:
            self.message.setText(f"Not written: {problem}")
            return
        self.written_result = None
        self.write_button.setEnabled(False)
        self.open_button.setEnabled(False)
        self.message.setText("Writing… an evaluation and a replay may take a minute" + (", then the upload." if push else "."))
        args = self.tool_args(overwrite)
        run_in_background(lambda: run_policy_tool("hub", self.run_dir, *args, timeout=HUB_TIMEOUT_S), self._done,
                          self._failed)

    def _done(self, result: dict[str, Any]) -> None:
        self.written_result = result
        self.write_button.setEnabled(True)
        self.open_button.setEnabled(True)
        self.message.setText(hub_summary(result))
        self.written.emit(result)

    def _failed(self, message: str) -> None:
        error = message.removeprefix("PolicyToolError: ")
        self.write_button.setEnabled(True)
        self.open_button.setEnabled(Path(self.folder_edit.text().strip()).is_dir())  # a failed push leaves the folder
        self.message.setText(f"Not done: {error}")
        self.failed.emit(error)

    def _open_folder(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(self.folder_edit.text().strip()))


def open_hub(run_dir: Path, parent: QWidget | None = None) -> HubDialog:
    """The Agent menu's Hub…: a dialog that stays open beside the window (not modal) while it works."""
    dialog = HubDialog(run_dir, parent)
    dialog.show()
    return dialog
