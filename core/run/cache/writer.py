"""The worker's side of the run's cache: ``metrics.jsonl`` and ``telemetry.jsonl`` kept as columns while they grow.

A window opening a run reads its cache (``core.run.cache.history``) and parses only the JSONL after it;
the window itself caches what it parsed, but only from the second open on. So the worker keeps the
cache too: ``CacheWriter`` is a thread of its own that wakes every ``every_s`` (never on the training
step's path), and for each file, once ``min_bytes`` or more of whole lines lie past the cache's end, reads
those bytes, parses them into the same columns the window would (``core.run.cache.columns``) and appends them
as one chunk whose CRCs are of the very bytes parsed. A 24 h run's telemetry is ~95 MB of JSONL: ~7 s of
CPU spread over the day, a ~60 ms parse every ~15 minutes.

Everything the cache does not match is found by reading it again (``HistoryCache.chunks``): a resume that
moved records aside (``metrics.jsonl`` cut back), a thinning that rewrote the telemetry's older hour, a
window that appended first, a torn chunk of a worker killed mid-append. The JSONL stays the only source:
the cache is what a parse of it gives, and deleting it loses nothing. ``stop`` writes what is left, even
under ``min_bytes``, so a finished run opens without a parse.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.run.cache.codec import encode_metrics, encode_telemetry
from core.run.cache.columns import metrics_batch, telemetry_batch
from core.run.cache.history import HistoryCache, probe_of, probe_range
from core.run.layout import RunDir
from core.run.records import well_formed_only
from core.telemetry.summary import well_formed_sample
from core.util.jsonl import parse_lines

MIN_BYTES = 1024 * 1024  # a chunk covers at least this much JSONL (but the last one, at stop)
MAX_BYTES = 8 * 1024 * 1024  # and at most this much: a catch-up (a thinning, a first start) in bounded parses
EVERY_S = 10.0

Columns = Callable[[bytes], tuple[dict[str, Any], list[np.ndarray]]]


def metrics_columns(data: bytes) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The cache chunk of whole ``metrics.jsonl`` lines: what the window's follower makes of them."""
    return encode_metrics(metrics_batch(well_formed_only(parse_lines(data))))


def telemetry_columns(data: bytes) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The cache chunk of whole ``telemetry.jsonl`` lines."""
    return encode_telemetry(telemetry_batch([s for s in parse_lines(data) if well_formed_sample(s)]))


class SourceCache:
    """One JSONL file's cache, brought up to the file's whole lines by ``update``."""

    def __init__(self, source: Path, cache: Path, columns: Columns):
        self.cache = HistoryCache(cache, source)
        self.columns = columns
        self._identity: tuple[int, int] | None = None  # the source's (device, inode) when its cache was read
        self._retry_at = 0  # after a refused append: the source's size from which to try again
        self._last: tuple[int, int, tuple[int, int]] | None = None  # the last chunk's source range and probe

    def update(self, min_bytes: int = MIN_BYTES, max_bytes: int = MAX_BYTES) -> int:
        """Append chunks while ``min_bytes`` of whole lines are past the cache's end; returns how many."""
        try:
            st = os.stat(self.cache.source)
        except OSError:
            return 0
        if (st.st_dev, st.st_ino) != self._identity or st.st_size < self.cache.end or not self._last_still_there():
            # a first look, a file replaced (a thinning), or cut back (a resume), even where it grew past the
            # cache's end again since the last look: what still matches
            entries = self.cache.chunks()  # each checked against the source's bytes as it was read
            self._identity = (st.st_dev, st.st_ino)
            self._last = (entries[-1].start, entries[-1].end, entries[-1].probe) if entries else None
        written = 0
        while st.st_size - self.cache.end >= min_bytes and st.st_size >= self._retry_at:
            start = self.cache.end
            with open(self.cache.source, "rb") as fh:
                fh.seek(start)
                data = fh.read(max(min_bytes, max_bytes))
            data = data[: data.rfind(b"\n") + 1]  # whole lines only: the last one may still be being written
            if len(data) < min_bytes:
                break  # not enough whole lines yet (or one longer than a chunk: the window parses it)
            probe = probe_of(data)
            if not self.cache.append(start, start + len(data), *self.columns(data), probe=probe):
                self._identity = None  # another writer wrote to it, or the folder is read-only: read it again
                self._retry_at = st.st_size + max_bytes  # and parse again only once there is more to cache
                break
            self._last = (start, start + len(data), probe)
            written += 1
        return written

    def _last_still_there(self) -> bool:
        """Whether the bytes under the last chunk are still those it was made of (a few bytes read)."""
        if self._last is None:
            return True
        start, end, probe = self._last
        try:
            with open(self.cache.source, "rb") as src:
                return probe_range(src, start, end) == probe
        except OSError:
            return False


class CacheWriter:
    """The run's two caches, kept by a thread of the worker (see the module's docstring)."""

    def __init__(self, run_dir: Path, every_s: float = EVERY_S, min_bytes: int = MIN_BYTES, max_bytes: int = MAX_BYTES):
        layout = RunDir(run_dir)
        self.sources = [SourceCache(layout.metrics, layout.cache_of(layout.metrics), metrics_columns),
                        SourceCache(layout.telemetry, layout.cache_of(layout.telemetry), telemetry_columns)]
        self.every_s = every_s
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self.chunks = 0  # chunks written (tests)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> CacheWriter:
        self._thread = threading.Thread(target=self._run, name="rlpanel-cache", daemon=True)
        self._thread.start()
        return self

    def update(self, min_bytes: int | None = None) -> int:
        """One pass over both files; returns the chunks written. Never raises: the cache is never worth a run."""
        written = 0
        for source in self.sources:
            try:
                written += source.update(self.min_bytes if min_bytes is None else min_bytes, self.max_bytes)
            except (OSError, ValueError) as exc:  # a full disk, a file changing under the parse
                print(f"rlpanel cache: {source.cache.path.name} not updated ({exc})", flush=True)
        self.chunks += written
        return written

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.update()

    def stop(self, timeout: float = 30.0) -> None:
        """End the thread, then cache what is left of both files (the JSONL's writers have stopped)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.update(min_bytes=1)
