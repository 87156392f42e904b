"""Record…: a video of a run's agent (checkpoint, episodes, an .mp4 or .gif file, or every kept checkpoint).

The video is made by ``python -m core.agent.record`` (``core.launch.agent_child``), waited for on a pool
thread (``run_in_background``): the window goes on while it plays; the dialog then shows what was written
or the tool's one-line error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QStandardPaths, QUrl
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
from core.launch.agent_results import recording_summary
from core.util.imports import installed

VIDEO_FILTER = "Video (*.mp4 *.gif)"


def default_video_path(run_dir: Path) -> Path:
    """``<Videos or home>/<run id>.mp4`` (``.gif`` where the MP4 encoder, imageio-ffmpeg, is missing)."""
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.MoviesLocation)
    base = Path(folder) if folder and Path(folder).is_dir() else Path.home()
    suffix = ".mp4" if installed("imageio_ffmpeg") else ".gif"
    return base / f"{Path(run_dir).name}{suffix}"


class RecordDialog(QDialog):
    """The recording's ``recorded`` (the tool's JSON) or its ``error`` once ``busy`` is False again."""

    def __init__(self, run_dir: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.run_dir = Path(run_dir)
        self.setWindowTitle(f"Record {self.run_dir.name}")
        self.recorded: dict[str, Any] | None = None
        self.error = ""
        self.busy = False
        self.picker = CheckpointPicker(self.run_dir)
        self.episodes = QSpinBox()
        self.episodes.setRange(1, 1000)
        self.episodes.setValue(1)
        self.episodes.setToolTip("Episodes played from each checkpoint")
        self.file_edit = QLineEdit(str(default_video_path(self.run_dir)))
        self.file_edit.setToolTip("An .mp4 or a .gif (short clips)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        file_row = QHBoxLayout()
        file_row.addWidget(self.file_edit, 1)
        file_row.addWidget(browse)
        self.all_box = QCheckBox("Every kept checkpoint, oldest first, each captioned with its step (how it learned)")
        self.all_box.toggled.connect(lambda on: self.picker.setEnabled(not on))
        self.message = WrapLabel("")
        self.buttons = QDialogButtonBox()
        self.record_button = self.buttons.addButton("Record", QDialogButtonBox.ButtonRole.AcceptRole)
        self.open_button = self.buttons.addButton("Open video", QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.setEnabled(False)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.record_button.clicked.connect(self.record)
        self.open_button.clicked.connect(self._open_video)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Checkpoint", self.picker)
        form.addRow("Episodes", self.episodes)
        form.addRow("File", file_row)
        form.addRow("", self.all_box)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self.resize(640, self.sizeHint().height())

    def _browse(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, "Record to", self.file_edit.text(), VIDEO_FILTER)
        if name:
            self.file_edit.setText(name)

    def tool_args(self, overwrite: bool) -> list[str]:
        args = ["-o", self.file_edit.text().strip(), "--episodes", str(self.episodes.value())]
        args += ["--all-checkpoints"] if self.all_box.isChecked() else ["--checkpoint", self.picker.value()]
        return args + (["--overwrite"] if overwrite else [])

    def record(self) -> None:
        """Start the recording off the GUI thread (asking first before a file is replaced)."""
        path = Path(self.file_edit.text().strip()).expanduser()
        if path.suffix.lower() not in (".mp4", ".gif"):
            self.message.setText("File: the video's name must end in .mp4 or .gif, e.g. agent.mp4.")
            return
        overwrite = False
        if path.exists():
            answer = QMessageBox.question(self, "Replace the video?", f"{path} exists. Replace it?")
            if answer != QMessageBox.StandardButton.Yes:
                return
            overwrite = True
        self.busy = True
        self.recorded, self.error = None, ""
        self.record_button.setEnabled(False)
        self.open_button.setEnabled(False)
        self.message.setText("Recording… the agent plays each frame into the video; this may take a minute.")
        args = self.tool_args(overwrite)
        run_in_background(lambda: run_policy_tool("record", self.run_dir, *args), self._done, self._failed)

    def _done(self, result: dict[str, Any]) -> None:
        self.busy = False
        self.recorded = result
        self.record_button.setEnabled(True)
        self.open_button.setEnabled(True)
        self.message.setText(_sentence(result))

    def _failed(self, message: str) -> None:
        self.busy = False
        self.error = message.removeprefix("PolicyToolError: ")
        self.record_button.setEnabled(True)
        self.message.setText(f"No video: {self.error}")

    def _open_video(self) -> None:
        if self.recorded:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.recorded["file"])))


def open_record(run_dir: Path, parent: QWidget | None = None) -> RecordDialog:
    """The Agent menu's Record…: a dialog that stays open beside the window (not modal) while it records."""
    dialog = RecordDialog(run_dir, parent)
    dialog.show()
    return dialog


def _sentence(result: dict[str, Any]) -> str:
    """The recording's line (``core.launch.agent_results``) as a sentence."""
    text = recording_summary(result)
    return text[:1].upper() + text[1:] + "."
