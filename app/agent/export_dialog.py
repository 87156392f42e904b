"""Export policy... (the Runs tab's Agent menu): a checkpoint's policy as an ONNX or TorchScript file.

The export is ``core.agent.export`` run as a child process (``core.launch.agent_child``) on a pool
thread, so the window neither loads torch nor waits; the dialog shows the file, its sidecar and,
with Check on, the largest difference from SB3's ``predict`` (or the tool's one-line error). An existing file
(or its sidecar) is replaced only when chosen with Browse… and confirmed there; a typed name is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.agent.checkpoint_picker import CheckpointPicker
from app.threads.background import run_in_background
from app.widgets.wrap_label import wrap_long_words
from core.launch.agent_child import run_policy_tool
from core.launch.agent_results import FORMATS, SUFFIX, TIMEOUT_S, default_name, summary

FORMAT_LABELS = {"onnx": "ONNX", "torchscript": "TorchScript"}
FILE_FILTERS = {"onnx": "ONNX model (*.onnx)", "torchscript": "TorchScript module (*.pt)"}


class ExportDialog(QDialog):
    """Choose a checkpoint, a format and a file; Export runs the tool off the GUI thread."""

    exported = Signal(dict)  # the tool's result
    failed = Signal(str)  # its one-line error

    def __init__(self, run_dir: Path, folder: Path | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.run_dir = Path(run_dir)
        self.folder = folder or Path.home()
        self.setWindowTitle(f"Export policy: {self.run_dir.name}")
        self._auto_name = ""
        self._confirmed = ""  # a file the save dialog asked to replace and the user said yes: the tool may replace it
        self._build()
        self._propose_name()

    def _build(self) -> None:
        self.checkpoint_box = CheckpointPicker(self.run_dir)
        self.format_box = QComboBox()
        for fmt in FORMATS:
            self.format_box.addItem(FORMAT_LABELS[fmt], fmt)
        self.format_box.setToolTip("ONNX: onnxruntime, TensorRT, OpenVINO, C++ and C# programs; "
                                   "TorchScript: torch.jit.load in Python or libtorch")
        self.file_edit = QLineEdit()
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self.choose_file)
        file_row = QHBoxLayout()
        file_row.addWidget(self.file_edit, 1)
        file_row.addWidget(self.browse_button)
        self.check_box = QCheckBox("Check: compare with SB3's predict on 1,000 observations")
        self.check_box.setChecked(True)
        form = QFormLayout()
        form.addRow("Checkpoint", self.checkpoint_box)
        form.addRow("Format", self.format_box)
        form.addRow("File", file_row)
        form.addRow("", self.check_box)
        note = QLabel("The file takes raw observations (normalisation baked in) and returns the env's own actions, "
                      "deterministic; a JSON sidecar next to it names the spaces.")
        note.setWordWrap(True)
        self.result_label = wrap_long_words(QLabel(""))  # it names the file written, or why not
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.ActionRole)
        self.export_button.setEnabled(self.checkpoint_box.count() > 0)
        self.export_button.clicked.connect(self.export)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.result_label, 1)
        layout.addWidget(self.buttons)
        self.checkpoint_box.currentIndexChanged.connect(lambda _i: self._propose_name())
        self.format_box.currentIndexChanged.connect(lambda _i: self._propose_name())
        self.resize(620, 300)

    @property
    def fmt(self) -> str:
        return str(self.format_box.currentData())

    def _propose_name(self) -> None:
        """``<run>-step<N>.onnx`` in the folder, unless the user named a file of their own."""
        step = self.checkpoint_box.step()
        if step is None or self.file_edit.text() not in ("", self._auto_name):
            return
        self._auto_name = str(self.folder / default_name(self.run_dir.name, step, self.fmt))
        self.file_edit.setText(self._auto_name)

    def choose_file(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export policy", self.file_edit.text(), FILE_FILTERS[self.fmt])
        if path:
            self.file_edit.setText(path if Path(path).suffix else path + SUFFIX[self.fmt])
            self._confirmed = self.file_edit.text()

    def tool_args(self) -> list[str]:
        args = ["--checkpoint", self.checkpoint_box.value(), "--format", self.fmt,
                "-o", str(Path(self.file_edit.text()).expanduser())]
        args += ["--overwrite"] if self._confirmed and self.file_edit.text() == self._confirmed else []
        return [*args, "--check"] if self.check_box.isChecked() else args

    def export(self) -> None:
        if not self.file_edit.text().strip():
            self._show_error("File: choose where to write the policy (Browse…)")
            return
        if not Path(self.file_edit.text()).expanduser().is_absolute():
            self._show_error("File: give the whole path of the file, e.g. with Browse…")
            return
        args = self.tool_args()
        self.export_button.setEnabled(False)
        self.result_label.setText("Exporting… (with Check: also running 1,000 observations through the file and SB3)")
        run_in_background(lambda: run_policy_tool("export", self.run_dir, *args, timeout=TIMEOUT_S),
                          self._done, self._failed)

    def _done(self, result: Any) -> None:
        self.export_button.setEnabled(True)
        self.result_label.setText(summary(result))
        self.exported.emit(result)

    def _failed(self, message: str) -> None:
        self.export_button.setEnabled(True)
        message = message.removeprefix("PolicyToolError: ")
        self._show_error(message)
        self.failed.emit(message)

    def _show_error(self, message: str) -> None:
        self.result_label.setText(f"Not exported: {message}")
