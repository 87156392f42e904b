"""Follow one run folder from a QThread and hand the window batches of what appeared.

``RunController`` lives in its own QThread: it reads ``status.json``, the new lines of
``metrics.jsonl``, ``telemetry.jsonl`` and ``worker.log`` as soon as the file system says they
changed (``app.monitor.file_watch``; a burst of changes is one read), else, where the folder cannot
be watched (a network drive, a refused watch), on a QTimer every ``POLL_MS``; turns the records into columns
(``core.run.cache.columns``: the per-record work happens here, not in the GUI thread), and emits
one signal per kind per tick. Every signal carries the generation it was read for;
``RunFollower`` (GUI side) drops a signal whose generation is not the current one, so a batch
still queued from the previous run never lands in the new run's plots.

Opening a long run never blocks the GUI thread: the history is read in chunks, and the next chunk
is read only when the window has taken the previous one (``ack``), so batches never pile up in
the GUI thread's queue; meanwhile ``loading`` says how much is read. The columns of each chunk of
at least ``CACHE_MIN_BYTES`` are kept in the run's cache (``core.run.cache.history``); the next open
hands the window the cached chunks first (no parsing) and parses only the bytes after them. Stopping runs
``core.launch.control.stop_run`` in the background (``app.threads.background``), because it blocks for up
to its timeout and following must go on meanwhile.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance, Slot

from app.monitor.file_watch import WATCHED_POLL_MS, RunWatch
from app.plots.buffers import envelope_indices
from app.threads.background import WorkerThread, run_in_background
from core.launch.control import stop_run
from core.run.cache.codec import decode, encode_metrics, encode_telemetry, joined, merged
from core.run.cache.columns import MetricsBatch, TelemetryBatch, metrics_batch, telemetry_batch
from core.run.cache.history import ChunkEntry, HistoryCache
from core.run.layout import RunDir
from core.run.records import well_formed_only
from core.run.states import ACTIVE
from core.run.status import RunStatus, read_status
from core.telemetry.summary import well_formed_sample
from core.util.files import TextTail
from core.util.jsonl import JsonlReader

POLL_MS = 200
CHUNK_BYTES = 4 * 1024 * 1024  # per file per tick: a 12 h history arrives in a few big batches
LOG_TAIL_BYTES = 64 * 1024  # the log shown on attach; older lines stay in the file
CACHE_MIN_BYTES = 1024 * 1024  # a chunk read is cached from this size: a live tick's few lines are not
REPLAY_BYTES = 8 * 1024 * 1024  # cached metrics handed over as one batch: their JSONL bytes (~80,000 records)
HISTORY_POINTS = 2**13  # a telemetry series of a history batch (not the newest) is handed over as ~this many points
HISTORY_RAW = 2**13  # the newest samples of the history kept as they are (27 min at 5 Hz): a zoom to the end is exact


def at_screen_resolution(batch: TelemetryBatch, keep_raw: int) -> TelemetryBatch:
    """``batch`` with each long series cut to the envelope of its older samples (their lowest and highest, real
    samples: every spike stays) and its newest ``keep_raw`` samples as they are, as the machine's plots keep
    older readings anyway (``app.plots.buffers``): the window copies ~8,000 points per series of a history
    chunk instead of ~36,000, and holds less. A short series is kept whole."""
    for part in batch.parts:
        for key, (times, values) in part.series.items():
            cut = len(values) - keep_raw
            if cut > 2 * HISTORY_POINTS:
                idx = np.concatenate((envelope_indices(values[:cut], HISTORY_POINTS), np.arange(cut, len(values))))
                part.series[key] = (times[idx], values[idx])
    return batch


class RunController(QObject):
    """Reads one run folder on a timer in its own thread; signals carry ``(generation, batch)``.

    Batches are declared ``object``, not ``list``/``dict``: they then cross threads as the Python
    objects themselves instead of being converted to a QVariantList (slow for big batches).
    """

    records = Signal(int, object)  # a MetricsBatch
    telemetry = Signal(int, object)  # a TelemetryBatch
    status = Signal(int, object)
    log_lines = Signal(int, object)
    loading = Signal(int, float)  # the share of the history read while catching up; -1 once caught up (always
    # said once per run followed, a short history read in one go included: the window shows the run's plots then)

    def __init__(self, poll_ms: int = POLL_MS, chunk_bytes: int = CHUNK_BYTES, watch: bool = True,
                 cache: bool = True):
        super().__init__()
        self.poll_ms = poll_ms
        self.watch_wanted = watch  # False: poll only (the fallback, injected by tests)
        self.not_watched: str | None = None  # why the followed folder is polled instead of watched
        self._watch: RunWatch | None = None
        self.chunk_bytes = chunk_bytes
        self.cache = cache  # keep the columns in the run's cache, and open from it
        self._caches: tuple[HistoryCache, HistoryCache] | None = None
        self._cached: tuple[deque[ChunkEntry], deque[ChunkEntry]] = (deque(), deque())  # still to hand over
        self.cached_batches = 0  # batches handed over from the cache (tests)
        self.run_dir: Path | None = None
        self.generation = 0
        self._timer: QTimer | None = None
        self._readers: tuple[JsonlReader, JsonlReader, TextTail] | None = None
        self._last_status: RunStatus | None = None
        self._unacked = 0  # batches emitted that the window has not taken yet
        self.most_unacked = 0  # the most there ever were (tests: never more than one tick's two)
        self._was_loading = False
        self._caught_up = False  # ``loading`` said -1 for this run: its whole history is out (said once per run)
        self._missed = False  # a change came while the window had not taken the last batch

    @Slot(str, int)
    def follow(self, run_dir: str, generation: int) -> None:
        """Start following ``run_dir`` ("" = nothing) from its first record."""
        self.generation = generation
        self.run_dir = Path(run_dir) if run_dir else None
        self._last_status = None
        self._unacked = 0
        self._was_loading = self._missed = self._caught_up = False
        self._caches, self._cached = None, (deque(), deque())
        layout = RunDir(self.run_dir or Path())
        if self.run_dir is None:
            self._readers = None
        else:
            offsets = (0, 0)
            if self.cache:
                self._caches = (HistoryCache(layout.cache_of(layout.metrics), layout.metrics),
                                HistoryCache(layout.cache_of(layout.telemetry), layout.telemetry))
                self._cached = (deque(self._caches[0].chunks()), deque(self._caches[1].chunks()))
                offsets = (self._caches[0].end, self._caches[1].end)
            self._readers = (JsonlReader(layout.metrics, offsets[0]), JsonlReader(layout.telemetry, offsets[1]),
                             TextTail(layout.worker_log, LOG_TAIL_BYTES, CHUNK_BYTES))
        if self._timer is None:  # created here so they belong to this object's thread
            self._timer = QTimer(self)
            self._timer.timeout.connect(self.poll)
            self._watch = RunWatch(self)
            self._watch.changed.connect(self.poll)
        assert self._watch is not None
        # the files that grow; status.json is replaced whole (a change of the folder itself)
        files = (layout.metrics, layout.telemetry, layout.worker_log) if self.run_dir is not None else ()
        self.not_watched = self._watch.watch(self.run_dir, files, self.watch_wanted)
        self._timer.start(self._steady_ms())
        self.poll()

    @property
    def watching(self) -> bool:
        """The followed folder's changes come from the file system (else from polls every ``poll_ms``)."""
        return self._watch is not None and self._watch.watching

    def _steady_ms(self) -> int:
        """The poll's interval once caught up: a safety net while watching, the only way in otherwise."""
        return max(self.poll_ms, WATCHED_POLL_MS) if self.watching else self.poll_ms

    @Slot(int)
    def ack(self, generation: int) -> None:
        """The window took a batch of ``generation``: the next chunk may be read."""
        if generation == self.generation and self._unacked:
            self._unacked -= 1
            if not self._unacked and (self._was_loading or self._missed) and self._timer is not None:
                self._timer.start(0)  # catching up, or records came meanwhile: the next read at once

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
        lines = log.read_new()
        if lines:
            self.log_lines.emit(gen, lines)
        active = status.state in ACTIVE
        if self._unacked:  # the window has not taken the last batch yet: read on when it has
            self._missed = True
            self._set_interval(self._steady_ms())
            return
        self._missed = False
        if self._replay_cached(gen):
            return
        backlog = self._read_records(gen, metrics, telemetry)
        if backlog or self._was_loading or not self._caught_up:
            self.loading.emit(gen, _progress(metrics, telemetry) if backlog else -1.0)
            self._was_loading, self._caught_up = backlog, not backlog
        # Catch up on a long history quickly; then poll at the normal pace (slowly while watched).
        # A run that ended is read once more for its last lines and then polled slowly.
        self._set_interval(self.poll_ms if backlog else self._steady_ms() * (1 if active else 4))

    def _replay_cached(self, gen: int) -> bool:
        """Hand the window the cached history: the metrics in batches of up to ``REPLAY_BYTES`` of their JSONL,
        the telemetry all at once at screen resolution; False once nothing cached is left."""
        if self._caches is None or self._readers is None or not (self._cached[0] or self._cached[1]):
            return False
        metrics_cache, telemetry_cache = self._caches
        metrics = self._load_cached(metrics_cache, self._cached[0], REPLAY_BYTES)
        if metrics:
            self.cached_batches += 1
            self._emit(self.records, gen, merged(metrics))
        telemetry = self._load_cached(telemetry_cache, self._cached[1], None)
        if telemetry:
            self.cached_batches += 1
            history = merged(telemetry)
            assert isinstance(history, TelemetryBatch)
            self._emit(self.telemetry, gen, at_screen_resolution(joined(history), HISTORY_RAW))
        shares = [(e[0].start if e else r.offset, r.path) for e, r in zip(self._cached, self._readers[:2], strict=True)]
        self._was_loading = True
        self.loading.emit(gen, _share_read(shares))
        self._set_interval(self.poll_ms)
        return True

    def _load_cached(self, cache: HistoryCache, pending: deque[ChunkEntry],
                     most_bytes: int | None) -> list[MetricsBatch | TelemetryBatch]:
        """The batches of the next cached chunks of one file, covering up to ``most_bytes`` of its JSONL (None:
        all; telemetry is cut to screen resolution chunk by chunk, so the whole history never lies in memory)."""
        batches: list[MetricsBatch | TelemetryBatch] = []
        first = pending[0].start if pending else 0
        while pending and (not batches or most_bytes is None or pending[0].end - first <= most_bytes):
            entry = pending.popleft()
            try:
                batch = decode(*cache.load(entry))
            except (OSError, ValueError, KeyError, IndexError, TypeError):  # damaged, or changed under us
                self._reread_from(entry, cache, pending)
                break
            if isinstance(batch, TelemetryBatch):  # only the newest samples are kept raw: those of the last chunk
                batch = at_screen_resolution(batch, 0 if pending else HISTORY_RAW)
            batches.append(batch)
        return batches

    def _reread_from(self, entry: ChunkEntry, cache: HistoryCache, pending: deque[ChunkEntry]) -> None:
        """A cached chunk could not be read: the rest of the file is parsed again, from where the chunk starts, and
        the cache is cut back to the chunks before it, so that what is parsed now replaces it (the next open
        reads it again instead of parsing it again; ``HistoryCache.cut_at``)."""
        pending.clear()
        assert self._readers is not None and self._caches is not None
        reader = self._readers[0] if cache is self._caches[0] else self._readers[1]
        reader.offset = entry.start
        if not cache.cut_at(entry):
            cache.end = -1  # another window holds it, or it cannot be written: nothing is appended to it this time

    def _read_records(self, gen: int, metrics: JsonlReader, telemetry: JsonlReader) -> bool:
        """Read a chunk of each file and emit it as columns; returns whether more is waiting."""
        backlog = False
        replaced = _was_replaced(metrics)  # a resume or a restart rewrote it
        start = 0 if replaced else metrics.offset
        raw = metrics.read_new(self.chunk_bytes)
        backlog |= bool(raw) and _has_more(metrics)
        recs = well_formed_only(raw)  # a damaged line never reaches the plots
        if recs or replaced:
            batch = metrics_batch(recs, reset=replaced)
            self._keep(0, replaced, start, metrics.offset, batch)
            self._emit(self.records, gen, batch)
        replaced = _was_replaced(telemetry)  # the recorder thins old telemetry by rewriting the file
        start = 0 if replaced else telemetry.offset
        samples = [s for s in telemetry.read_new(self.chunk_bytes) if well_formed_sample(s)]
        if replaced:
            samples = [{"kind": "reset"}, *samples]
        if samples:
            tbatch = telemetry_batch(samples)
            self._keep(1, replaced, start, telemetry.offset, tbatch)
            more = _has_more(telemetry)
            self._emit(self.telemetry, gen, at_screen_resolution(tbatch, 0 if more else HISTORY_RAW))
            backlog |= more
        return backlog

    def _keep(self, which: int, replaced: bool, start: int, end: int, batch: MetricsBatch | TelemetryBatch) -> None:
        """Add the columns of the source bytes ``start:end`` to the file's cache (a big enough chunk)."""
        if self._caches is None:
            return
        cache = self._caches[which]
        if replaced:
            cache.clear()
        if end - start >= CACHE_MIN_BYTES:
            cache.append(start, end, *(encode_metrics(batch) if isinstance(batch, MetricsBatch) else encode_telemetry(batch)))

    def _emit(self, signal: SignalInstance, gen: int, batch: MetricsBatch | TelemetryBatch) -> None:
        self._unacked += 1
        self.most_unacked = max(self.most_unacked, self._unacked)
        signal.emit(gen, batch)

    def _set_interval(self, ms: int) -> None:
        if self._timer is not None:
            self._timer.setInterval(ms)

    @Slot()
    def shutdown(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        if self._watch is not None:
            self._watch.stop()


def _was_replaced(reader: JsonlReader) -> bool:
    try:
        return reader.offset > 0 and reader.path.stat().st_size < reader.offset
    except OSError:
        return False


def _progress(*readers: JsonlReader) -> float:
    """The share of the files read so far."""
    return _share_read([(reader.offset, reader.path) for reader in readers])


def _share_read(offsets: list[tuple[int, Path]]) -> float:
    """The share of the files before these offsets."""
    read = size = 0
    for offset, path in offsets:
        try:
            size += path.stat().st_size
            read += offset
        except OSError:
            pass
    return min(1.0, read / size) if size else 1.0


def _has_more(reader: JsonlReader) -> bool:
    try:
        return reader.path.stat().st_size > reader.offset + 1
    except OSError:
        return False


class RunFollower(QObject):
    """GUI-side handle of a ``RunController`` in its own QThread.

    Re-emits the controller's batches without the generation, dropping stale ones.
    """

    records = Signal(object)  # a MetricsBatch
    telemetry = Signal(object)  # a TelemetryBatch
    status = Signal(object)
    log_lines = Signal(object)
    loading = Signal(float)  # share of the history read while catching up; -1 when caught up
    stop_finished = Signal(str)
    _follow = Signal(str, int)
    _ack = Signal(int)
    _shutdown = Signal()

    def __init__(self, parent: QObject | None = None, poll_ms: int = POLL_MS, chunk_bytes: int = CHUNK_BYTES,
                 watch: bool = True, cache: bool = True):
        super().__init__(parent)
        self.generation = 0
        self.run_dir: Path | None = None
        self.controller = RunController(poll_ms, chunk_bytes, watch, cache)
        self._follow.connect(self.controller.follow)
        self._ack.connect(self.controller.ack)
        self._shutdown.connect(self.controller.shutdown)
        self.controller.records.connect(self._on_records)
        self.controller.telemetry.connect(self._on_telemetry)
        self.controller.status.connect(self._on_status)
        self.controller.log_lines.connect(self._on_log)
        self.controller.loading.connect(self._on_loading)
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

    def _on_records(self, gen: int, batch: MetricsBatch) -> None:
        if self._current(gen):
            self.records.emit(batch)  # the window's slots run here, in this thread, before the ack
            self._ack.emit(gen)

    def _on_telemetry(self, gen: int, batch: TelemetryBatch) -> None:
        if self._current(gen):
            self.telemetry.emit(batch)
            self._ack.emit(gen)

    def _on_loading(self, gen: int, share: float) -> None:
        if self._current(gen):
            self.loading.emit(share)

    def _on_status(self, gen: int, status: RunStatus) -> None:
        if self._current(gen):
            self.status.emit(status)

    def _on_log(self, gen: int, lines: list[str]) -> None:
        if self._current(gen):
            self.log_lines.emit(lines)
