"""Append-only JSONL files: the run folder's records (metrics.jsonl, telemetry.jsonl).

Readers tolerate a torn last line (a writer killed mid-write) and never lose earlier records.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from core.util.files import read_tail


class JsonlReader:
    """Reads new complete records of an append-only JSONL file, from a byte offset.

    A last line without its newline is left for the next call (it may still be being
    written); a complete line that is not valid JSON is skipped and counted in ``skipped``.
    A file replaced under the reader (a resume moves an interrupted attempt's records aside and
    writes the rest as a new file) is read again from its start, and ``restarts`` counts it: the
    records it returns then are ones it returned before, so a caller that counts or prints them
    starts over (``core.cli.follow``). The replacement is told by the file's identity, not only by
    a shorter size: the new file may already be longer than the old offset when it is first read.
    """

    def __init__(self, path: Path, offset: int = 0):
        self.path = Path(path)
        self.offset = offset
        self.skipped = 0
        self.restarts = 0
        self._identity: tuple[int, int] | None = None  # (device, inode) of the file the offset belongs to

    def read_new(self, max_bytes: int | None = None) -> list[dict[str, Any]]:
        try:
            with open(self.path, "rb") as fh:
                stat = os.fstat(fh.fileno())
                identity = (stat.st_dev, stat.st_ino)
                replaced = self._identity is not None and identity != self._identity
                if (replaced or stat.st_size < self.offset) and self.offset:  # a new file: start over
                    self.offset = 0
                    self.restarts += 1
                self._identity = identity
                fh.seek(self.offset)
                chunk = fh.read(max_bytes if max_bytes is not None else -1)
        except FileNotFoundError:
            return []
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        return parse_lines(chunk[: end + 1], self)


def parse_lines(data: bytes, counter: JsonlReader | None = None) -> list[dict[str, Any]]:
    records = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            if counter is not None:
                counter.skipped += 1
            continue
        if isinstance(rec, dict):
            records.append(rec)
    return records


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every complete record of a JSONL file (a torn last line is ignored)."""
    return JsonlReader(path).read_new()


def tail_jsonl(path: Path, max_bytes: int = 256 * 1024) -> list[dict[str, Any]]:
    """The complete records in the last ``max_bytes`` of a JSONL file (cheap for big files)."""
    data, _ = read_tail(path, max_bytes)
    end = data.rfind(b"\n")
    return parse_lines(data[: end + 1]) if end >= 0 else []


class JsonlWriter:
    """Appends records to a JSONL file; repairs a torn tail left by a killed writer first."""

    def __init__(self, path: Path):
        self.path = Path(path)
        repair_torn_tail(self.path)
        self._fh = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()  # the worker's watchdog thread writes its events beside the training thread

    def write(self, records: list[dict[str, Any]]) -> None:
        if records:
            text = "".join(json.dumps(r, separators=(",", ":"), default=float) + "\n" for r in records)
            with self._lock:
                self._fh.write(text)
                self._fh.flush()

    def sync(self) -> None:
        """Make what was written durable (before a checkpoint that covers it is written)."""
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def repair_torn_tail(path: Path) -> int:
    """Cut a last line that has no newline (a writer killed mid-record); returns bytes cut."""
    try:
        with open(path, "rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            back = min(size, 1 << 20)
            fh.seek(size - back)
            data = fh.read()
            if data.endswith(b"\n"):
                return 0
            keep = size - back + data.rfind(b"\n") + 1
            fh.truncate(keep)
            return size - keep
    except FileNotFoundError:
        return 0
