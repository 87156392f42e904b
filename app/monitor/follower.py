"""Follow one run folder from a QThread and hand the window batches of what appeared.

``RunController`` lives in its own QThread: a QTimer there reads ``status.json``, the new lines
of ``metrics.jsonl``, ``telemetry.jsonl`` and ``worker.log``, and emits one signal per kind per
tick. Every signal carries the generation it was read for; ``RunFollower`` (GUI side) drops a
signal whose generation is not the current one, so a batch still queued from the previous run
never lands in the new run's plots. Stopping runs ``core.run.control.stop_run`` in the background
(``app.background``), because it blocks for up to its timeout and following must go on meanwhile.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app.background import WorkerThread, run_in_background
from core.run.control import stop_run
from core.run.layout import RunDir
from core.run.records import well_formed_only
from core.run.states import ACTIVE
from core.run.status import read_status
from core.telemetry.summary import well_formed_sample
from core.util.files import TextTail
from core.util.jsonl import JsonlReader

POLL_MS = 200
CHUNK_BYTES = 4 * 1024 * 1024  # per file per tick: a 12 h history arrives in a few big batches
LOG_TAIL_BYTES = 64 * 1024  # the log shown on attach; older lines stay in the file


class RunController(QObject):
    """Reads one run folder on a timer in its own thread; signals carry ``(generation, batch)``.

    Batches are declared ``object``, not ``list``/``dict``: they then cross threads as the Python
    objects themselves instead of being converted to a QVariantList (slow for big batches).
    """

    records = Signal(int, object)
    telemetry = Signal(int, object)
    status = Signal(int, object)
    log_lines = Signal(int, object)

    def __init__(self, poll_ms: int = POLL_MS):
        super().__init__()
        self.poll_ms = poll_ms
        self.run_dir: Path | None = None
        self.generation = 0
        self._timer: QTimer | None = None
        self._readers: tuple[JsonlReader, JsonlReader, TextTail] | None = None
        self._last_status: dict | None = None

    @Slot(str, int)
    def follow(self, run_dir: str, generation: int) -> None:
        """Start following ``run_dir`` ("" = nothing) from its first record."""
        self.generation = generation
        self.run_dir = Path(run_dir) if run_dir else None
        self._last_status = None
        if self.run_dir is None:
            self._readers = None
        else:
            layout = RunDir(self.run_dir)
            self._readers = (JsonlReader(layout.metrics), JsonlReader(layout.telemetry),
                             TextTail(layout.worker_log, LOG_TAIL_BYTES, CHUNK_BYTES))
        if self._timer is None:  # created here so it belongs to this object's thread
            self._timer = QTimer(self)
            self._timer.timeout.connect(self.poll)
        self._timer.start(self.poll_ms)
        self.poll()

    @Slot()
    def poll(self) -> None:
        """One tick: emit what is new since the last tick (nothing is emitted for nothing)."""
        if self.run_dir is None or self._readers is None:
            return
        gen = self.generation
        metrics, telemetry, log = self._readers
        status = read_status(self.run_dir)
        if status != self._last_status:
            self._last_status = status
            self.status.emit(gen, status)
        backlog = False
        recs = metrics.read_new(CHUNK_BYTES)
        backlog |= bool(recs) and _has_more(metrics)
        recs = well_formed_only(recs)  # a damaged line never reaches the plots
        if recs:
            self.records.emit(gen, recs)
        replaced = _was_replaced(telemetry)  # the recorder thins old telemetry by rewriting the file
        samples = [s for s in telemetry.read_new(CHUNK_BYTES) if well_formed_sample(s)]
        if replaced:
            samples = [{"kind": "reset"}, *samples]
        if samples:
            self.telemetry.emit(gen, samples)
            backlog |= _has_more(telemetry)
        lines = log.read_new()
        if lines:
            self.log_lines.emit(gen, lines)
        if self._timer is not None:
            # Catch up on a long history quickly; then poll at the normal pace. A run that
            # ended is read once more for its last lines and then polled slowly.
            active = status.get("state") in ACTIVE
            self._timer.setInterval(0 if backlog else (self.poll_ms if active else 4 * self.poll_ms))

    @Slot()
    def shutdown(self) -> None:
        if self._timer is not None:
            self._timer.stop()


def _was_replaced(reader: JsonlReader) -> bool:
    try:
        return reader.offset > 0 and reader.path.stat().st_size < reader.offset
    except OSError:
        return False


def _has_more(reader: JsonlReader) -> bool:
    try:
        return reader.path.stat().st_size > reader.offset + 1
    except OSError:
        return False


class RunFollower(QObject):
    """GUI-side handle of a ``RunController`` in its own QThread.

    Re-emits the controller's batches without the generation, dropping stale ones.
    """

    records = Signal(object)
    telemetry = Signal(object)
    status = Signal(object)
    log_lines = Signal(object)
    stop_finished = Signal(str)
    _follow = Signal(str, int)
    _shutdown = Signal()

    def __init__(self, parent: QObject | None = None, poll_ms: int = POLL_MS):
        super().__init__(parent)
        self.generation = 0
        self.run_dir: Path | None = None
        self.controller = RunController(poll_ms)
        self._follow.connect(self.controller.follow)
        self._shutdown.connect(self.controller.shutdown)
        self.controller.records.connect(self._on_records)
        self.controller.telemetry.connect(self._on_telemetry)
        self.controller.status.connect(self._on_status)
        self.controller.log_lines.connect(self._on_log)
        self.worker = WorkerThread(self.controller, "run-controller")

    def follow(self, run_dir: Path | str | None) -> int:
        """Follow ``run_dir`` (None: nothing); returns the new generation."""
        self.generation += 1
        self.run_dir = Path(run_dir) if run_dir else None
        self._follow.emit(str(run_dir) if run_dir else "", self.generation)
        return self.generation

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the followed run (STOP file, then kill after ``timeout``); ``stop_finished(how)`` tells how.

        A stop result matters even if the user switched runs meanwhile: it is always reported.
        """
        run_dir = self.run_dir
        if run_dir is None:
            self.stop_finished.emit("not running")
            return
        run_in_background(lambda: stop_run(run_dir, timeout=timeout), self.stop_finished.emit,
                          lambda message: self.stop_finished.emit(f"failed: {message}"))

    def close(self) -> None:
        """Stop following and end the thread (the run itself keeps going)."""
        self.generation += 1
        self._shutdown.emit()
        self.worker.close()

    def _current(self, gen: int) -> bool:
        return gen == self.generation

    def _on_records(self, gen: int, batch: list) -> None:
        if self._current(gen):
            self.records.emit(batch)

    def _on_telemetry(self, gen: int, batch: list) -> None:
        if self._current(gen):
            self.telemetry.emit(batch)

    def _on_status(self, gen: int, status: dict) -> None:
        if self._current(gen):
            self.status.emit(status)

    def _on_log(self, gen: int, lines: list) -> None:
        if self._current(gen):
            self.log_lines.emit(lines)
