"""The idle GPU monitor: ``core.telemetry.nvml.GpuSampler`` polled ~2 Hz in a worker thread.

Samples are emitted as dicts shaped like ``telemetry.jsonl`` lines, so the GPU plots draw idle
and run telemetry the same way.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app.threads.background import WorkerThread
from core.telemetry.nvml import GpuSampler, nvml_status

IDLE_POLL_MS = 500


class GpuPoller(QObject):
    """Lives in a QThread; NVML calls (which may stall) never run on the GUI thread."""

    samples = Signal(object)
    unavailable = Signal(str)

    def __init__(self, poll_ms: int = IDLE_POLL_MS):
        super().__init__()
        self.poll_ms = poll_ms
        self._timer: QTimer | None = None
        self._sampler: GpuSampler | None = None

    @Slot()
    def start(self) -> None:
        try:
            status = nvml_status()
        except Exception as exc:  # noqa: BLE001 (a broken driver must not take the window down)
            self.unavailable.emit(f"GPU telemetry could not start: {exc}")
            return
        if not status.available:
            self.unavailable.emit(status.reason or "NVML is not available")
            return
        self._sampler = GpuSampler()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.poll)
        self._timer.start(self.poll_ms)
        self.poll()

    @Slot()
    def poll(self) -> None:
        if self._sampler is None:
            return
        try:
            rows = [s._asdict() for s in self._sampler.sample()]
        except Exception as exc:  # noqa: BLE001
            self.unavailable.emit(f"GPU sampling failed: {exc}")
            if self._timer is not None:
                self._timer.stop()
            return
        for row in rows:
            row["gpu"] = row.pop("index")
        if rows:
            self.samples.emit(rows)

    @Slot()
    def shutdown(self) -> None:
        if self._timer is not None:
            self._timer.stop()


class IdleGpuMonitor(QObject):
    """GUI-side handle: ``samples(list)`` and ``unavailable(str)`` from the poller's thread."""

    samples = Signal(object)
    unavailable = Signal(str)
    _start = Signal()
    _shutdown = Signal()

    def __init__(self, parent: QObject | None = None, poll_ms: int = IDLE_POLL_MS, start: bool = True):
        """``start=False``: NVML is opened at ``start()`` (the window's, after its first frame)."""
        super().__init__(parent)
        self.poller = GpuPoller(poll_ms)
        self._start.connect(self.poller.start)
        self._shutdown.connect(self.poller.shutdown)
        self.poller.samples.connect(self.samples)
        self.poller.unavailable.connect(self.unavailable)
        self.worker = WorkerThread(self.poller, "gpu-monitor")
        self._started = False
        if start:
            self.start()

    def start(self) -> None:
        """Open NVML and poll, in the poller's thread (once)."""
        if not self._started:
            self._started = True
            self._start.emit()

    def close(self) -> None:
        self._shutdown.emit()
        self.worker.close()
