"""Read the Results tab's runs off the GUI thread: a table row and a reward curve per run folder.

Summarising a 12 h run reads ~300,000 JSON lines (~1.5 s); on the GUI thread every tick of a
box would freeze the window that long. ``ResultsLoader`` hands the reading to a worker thread
and answers with ``loaded(request_id, {path: (ResultRow, RewardCurve) or an error message})``;
a folder that did not change since it was last read (same files, sizes and times) and whose run
has ended is answered from a cache. Requests superseded by a newer one before they start are
skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from app.threads.background import WorkerThread
from core.results.curves import RewardCurve, reward_curve
from core.results.table import ResultRow, result_row
from core.run.states import ACTIVE

FolderStamp = tuple[tuple[str, int, int], ...]  # name, size and modification time (ns) of each file


def folder_stamp(run_dir: Path) -> FolderStamp:
    """Name, size and modification time of each file directly in ``run_dir``."""
    try:
        with os.scandir(run_dir) as entries:
            return tuple(sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries if e.is_file()))
    except OSError:
        return ()


class _Reader(QObject):
    """Lives in the loader's thread; the cache is only touched there."""

    done = Signal(int, object)

    def __init__(self) -> None:
        super().__init__()
        self.latest = 0  # set from the GUI thread: requests older than this are not read
        self._cache: dict[str, tuple[FolderStamp, tuple[ResultRow, RewardCurve]]] = {}

    @Slot(int, object)
    def load(self, request_id: int, paths: list[str]) -> None:
        if request_id < self.latest:
            return
        out: dict[str, tuple[ResultRow, RewardCurve] | str] = {}
        for path in paths:
            stamp = folder_stamp(Path(path))
            cached = self._cache.get(path)
            if cached is not None and cached[0] == stamp:
                out[path] = cached[1]
                continue
            try:
                row, curve = result_row(Path(path)), reward_curve(Path(path))
            except Exception as exc:  # noqa: BLE001 (deleted meanwhile, unreadable: say so, and still answer)
                out[path] = f"{Path(path).name}: {exc}"
                continue
            out[path] = (row, curve)
            if row.state not in ACTIVE:  # a running run's files change anyway; its state may turn crashed
                self._cache[path] = (stamp, (row, curve))
        self.done.emit(request_id, out)


class ResultsLoader(QObject):
    """GUI-side handle: ``request(id, paths)``; ``loaded(id, results)`` when read. ``close()`` at the end."""

    loaded = Signal(int, object)
    _load = Signal(int, object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._reader = _Reader()
        self._load.connect(self._reader.load)
        self._reader.done.connect(self.loaded)
        self.worker = WorkerThread(self._reader, "results-loader")

    def request(self, request_id: int, paths: list[Path]) -> None:
        self._reader.latest = request_id
        self._load.emit(request_id, [str(p) for p in paths])

    def close(self) -> None:
        self.worker.close(10_000)
