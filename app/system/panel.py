"""The System tab: what ``rlpanel doctor`` reports, gathered off the GUI thread.

The doctor probes torch in a subprocess (importing torch here is forbidden and slow), which
can take seconds, so it runs on a worker thread and the panel fills in when it is done.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from app.background import run_in_background
from core.cli import doctor


def gather_report(runs_dir: Path) -> str:
    """The doctor's report as text, exactly as ``rlpanel doctor`` prints it."""
    return doctor.format_report(doctor.report(Path(runs_dir)))


class SystemPanel(QWidget):
    report_ready = Signal(str)

    def __init__(self, runs_dir: Path, parent=None):
        super().__init__(parent)
        self.runs_dir = Path(runs_dir)
        self._busy = False
        self.state = QLabel("Not checked yet")
        self.refresh_button = QPushButton("Check again")
        self.refresh_button.clicked.connect(self.refresh)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # a report in columns: scroll, do not wrap
        top = QHBoxLayout()
        top.addWidget(self.state, 1)
        top.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.text, 1)

    def refresh(self) -> None:
        """Gather the report again on a worker thread (does nothing while one is running)."""
        if self._busy:
            return
        self._busy = True
        self.refresh_button.setEnabled(False)
        self.state.setText("Checking python, torch, CUDA, GPUs and disk (torch is probed in a subprocess)...")

        run_in_background(lambda: gather_report(self.runs_dir), self._show,
                          lambda message: self._show(f"The system check failed: {message}"))

    def _show(self, text: str) -> None:
        self._busy = False
        self.refresh_button.setEnabled(True)
        self.state.setText("What `rlpanel doctor` reports:")
        self.text.setPlainText(text)
        self.report_ready.emit(text)

    def showEvent(self, ev):  # noqa: N802 (Qt API)
        super().showEvent(ev)
        if not self.text.toPlainText() and not self._busy:
            self.refresh()
