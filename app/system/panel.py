"""The System tab: what ``rlpanel doctor`` reports, gathered off the GUI thread; Calibrate.

The doctor probes torch in a subprocess (importing torch here is forbidden and slow), which
can take seconds, so it runs on a worker thread and the panel fills in when it is done.
Calibrate runs ``rlpanel calibrate``'s probe (``core.estimate.calibration``, ~20 s) the same way and
says ``calibrated`` so the fit estimate is made again with the card's measured costs. Disabled, its
tooltip says why (``calibrate_blocked``): no NVIDIA GPU seen by NVML, a torch without CUDA (known once
the report is in), or a calibration running.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from app.threads.background import run_in_background
from core.estimate.calibration import Calibration, CalibrationError, describe, run_calibration
from core.estimate.gpus import GpuProfile, detected_profiles
from core.machine import doctor
from core.telemetry.nvml import NvmlStatus, nvml_status

CALIBRATE_TIP = ("Measure CUDA's fixed memory costs on this GPU (~20 s) so the fit estimate uses this card's, "
                 "driver's and torch's own figures")


def gather_report(runs_dir: Path) -> dict[str, Any]:
    """The doctor's report (``rlpanel doctor``'s data; ``doctor.format_report`` prints it)."""
    return doctor.report(Path(runs_dir))


def calibrate_blocked(profiles: list[GpuProfile], nvml: NvmlStatus, torch: dict[str, Any] | None,
                      calibrating: bool) -> str | None:
    """Why Calibrate GPU cannot run now (None: it can). ``torch``: the report's torch facts (None: not in yet)."""
    if calibrating:
        return "Calibrating: the probe is measuring this GPU (~20 s)"
    if not profiles:
        if not nvml.available:
            return f"No NVIDIA GPU seen: NVML is not available here ({nvml.reason})"
        return "No NVIDIA GPU seen: NVML finds no card here whose memory it can read"
    if torch is None:
        return None
    if "error" in torch:
        return f"torch is not usable here ({torch['error']}): the calibration measures CUDA through torch"
    if not torch.get("cuda_available"):
        if torch.get("torch_cuda_build"):
            return "CUDA is not available to torch (driver missing or too old?): the calibration measures CUDA through torch"
        return ("This torch is a CPU-only build: the calibration measures CUDA through torch "
                "(see the README for installing the CUDA build)")
    return None


def calibrate_card(index: int = 0) -> Calibration | str:
    """The card's calibration, or why there is none (one line)."""
    try:
        cal = run_calibration(index)
    except CalibrationError as exc:
        return f"Cannot calibrate: {exc}"
    detected_profiles(refresh=True)
    return cal


class SystemPanel(QWidget):
    report_ready = Signal(str)
    calibrated = Signal(object)  # the Calibration: estimates for this card change

    def __init__(self, runs_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs_dir = Path(runs_dir)
        self._busy = False
        self.state = QLabel("Not checked yet")
        self.state.setWordWrap(True)
        self.refresh_button = QPushButton("Check again")
        self.refresh_button.clicked.connect(self.refresh)
        self._calibrating = False
        self._torch: dict[str, Any] | None = None  # the report's torch facts, once in
        self.calibrate_button = QPushButton("Calibrate GPU")
        self.calibrate_button.clicked.connect(self.calibrate)
        self._update_calibrate()
        self.calibration_label = QLabel("")
        self.calibration_label.setWordWrap(True)
        self.calibration_label.hide()
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # a report in columns: scroll, do not wrap
        top = QHBoxLayout()
        top.addWidget(self.state, 1)
        top.addWidget(self.calibrate_button)
        top.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.calibration_label)
        layout.addWidget(self.text, 1)

    def refresh(self) -> None:
        """Gather the report again on a worker thread (does nothing while one is running)."""
        if self._busy:
            return
        self._busy = True
        self.refresh_button.setEnabled(False)
        self.state.setText("Checking python, torch, CUDA, GPUs and disk (torch is probed in a subprocess)...")

        run_in_background(lambda: gather_report(self.runs_dir), self._show_report,
                          lambda message: self._show(f"The system check failed: {message}"))

    def _update_calibrate(self) -> None:
        blocked = calibrate_blocked(detected_profiles(), nvml_status(), self._torch, self._calibrating)
        self.calibrate_button.setEnabled(blocked is None)
        self.calibrate_button.setToolTip(blocked or CALIBRATE_TIP)

    def calibrate(self, index: int = 0) -> None:
        """Measure the card in the probe process, off the GUI thread."""
        self._calibrating = True
        self._update_calibrate()
        self.calibration_label.setText("Calibrating: measuring CUDA's context, cuBLAS, cuDNN and the allocator "
                                       "on this GPU in a probe process (~20 s)...")
        self.calibration_label.show()
        run_in_background(lambda: calibrate_card(index), self._calibrated,
                          lambda message: self._calibrated(f"Cannot calibrate: {message}"))

    def _calibrated(self, result: Calibration | str) -> None:
        self._calibrating = False
        self._update_calibrate()
        self.calibration_label.setText(describe(result) if isinstance(result, Calibration) else result)
        if isinstance(result, Calibration):
            self.calibrated.emit(result)

    def _show_report(self, data: dict[str, Any]) -> None:
        self._torch = data["torch"]
        self._update_calibrate()
        self._show(doctor.format_report(data))

    def _show(self, text: str) -> None:
        self._busy = False
        self.refresh_button.setEnabled(True)
        self.state.setText("What `rlpanel doctor` reports:")
        self.text.setPlainText(text)
        self.report_ready.emit(text)

    def showEvent(self, ev: QShowEvent) -> None:  # noqa: N802 (Qt API)
        super().showEvent(ev)
        if not self.text.toPlainText() and not self._busy:
            self.refresh()

    def on_shown(self) -> None:
        """Nothing to do: the report is read when asked for."""

    def on_closing(self) -> None:
        """Nothing of its own to stop."""
