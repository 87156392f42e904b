"""A run's records as columns, cached beside their JSONL file so a long run opens without parsing it again.

Parsing is what opening a long run costs: a 24 h ``telemetry.jsonl`` is ~430,000 JSON lines, ~10 s
of CPU on a busy 2-core laptop, while the same numbers as float64 columns load in milliseconds.
The window (``app.monitor.follower``) parses a chunk of the JSONL as before, and appends its
columns here as one chunk; the next open reads the chunks and parses only the bytes after them.

The JSONL file stays the only source of truth: the cache is rebuilt from it, and deleting
``cache/`` loses nothing. One file per source (``cache/metrics.cols``, ``cache/telemetry.cols``),
append-only, each chunk covering a byte range of its source::

    file   := MAGIC chunk*
    chunk  := HEAD(start, end, body_len, crc of the source's first bytes of the range,
                   crc of its last bytes, crc of body) body
    body   := u32 meta_len, meta (JSON: what the arrays are), the arrays (little-endian float64)

``chunks()`` takes the chunks in order while each is whole (a torn tail: a window killed mid-append),
starts where the previous one ended, ends within the source, and still matches the source's bytes at
both ends of its range (a file replaced by a resume, or rewritten by telemetry thinning, no longer
does); the first that does not and everything after it are cut off, and parsing resumes there. The
thinned part of a telemetry file is rewritten byte for byte, so its chunks survive a thinning.

A chunk whose body fails its CRC when loaded (a bad sector, a stray write) is cut off with everything after
it (``cut_at``), so the window parses that part again once and appends its columns in its place: the next
open reads the cache again instead of parsing the same bytes on every open.

A read-only run folder (a share) is read without a cache. Two windows on one run: the one holding
``cache/.write.lock`` appends, and only onto the end it read (``append`` and ``cut_at`` re-check it).
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.util.locks import held_if_free

MAGIC = b"RLPCOLS1"
HEAD = struct.Struct("<QQQIII")  # start, end, body_len, head_crc, tail_crc, body_crc
META_LEN = struct.Struct("<I")
PROBE_BYTES = 4096  # bytes of the source compared at each end of a chunk's range
DTYPE = np.dtype("<f8")
LOCK_NAME = ".write.lock"


@dataclass(frozen=True)
class ChunkEntry:
    """Where one valid chunk lies in the cache file, and the source bytes it covers."""

    start: int
    end: int
    body_offset: int
    body_len: int
    body_crc: int = 0
    probe: tuple[int, int] = (0, 0)  # the CRCs of its source range's ends (``probe_range``), as checked when it was read


def probe_range(fh: Any, start: int, end: int) -> tuple[int, int]:
    """CRCs of the first and of the last ``PROBE_BYTES`` of ``start:end`` of an open source file."""
    fh.seek(start)
    head = fh.read(min(PROBE_BYTES, end - start))
    fh.seek(max(start, end - PROBE_BYTES))
    tail = fh.read(end - max(start, end - PROBE_BYTES))
    return zlib.crc32(head), zlib.crc32(tail)


def probe_of(data: bytes) -> tuple[int, int]:
    """The CRCs ``append`` takes for a chunk made of the source bytes ``data`` (its whole range): those of the
    very bytes parsed, so a file replaced meanwhile (a thinning) cannot pass for them."""
    return zlib.crc32(data[:PROBE_BYTES]), zlib.crc32(data[-PROBE_BYTES:])


def encode_body(meta: dict[str, Any], arrays: list[np.ndarray]) -> bytes:
    """A chunk's body: its meta (JSON) and its arrays, whose lengths the meta gets under ``_lens``."""
    meta = {**meta, "_lens": [len(a) for a in arrays]}
    text = json.dumps(meta, separators=(",", ":")).encode()
    return b"".join([META_LEN.pack(len(text)), text, *(np.ascontiguousarray(a, dtype=DTYPE).tobytes() for a in arrays)])


def decode_body(body: bytes | bytearray) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The meta and the arrays of a chunk's body (the arrays are views of the body: no copy)."""
    (meta_len,) = META_LEN.unpack_from(body)
    meta = json.loads(body[META_LEN.size: META_LEN.size + meta_len])
    offset = META_LEN.size + meta_len
    arrays = []
    for n in meta.pop("_lens"):
        arrays.append(np.frombuffer(body, dtype=DTYPE, count=n, offset=offset))
        offset += n * DTYPE.itemsize
    return meta, arrays


class HistoryCache:
    """The cache of one JSONL ``source`` in the file ``path``; ``end``: the source bytes it covers."""

    def __init__(self, path: Path, source: Path):
        self.path = Path(path)
        self.source = Path(source)
        self.end = 0
        self._file_end = 0  # where the next chunk goes: the end of the valid chunks
        self._seen_size = 0  # the cache file's size when read: another window's append changes it
        self.rebuilt = False  # chunks were cut off as torn or stale by the last ``chunks()``

    def chunks(self) -> list[ChunkEntry]:
        """The valid chunks, in order (see the module's docstring); cuts off the rest of the file."""
        entries: list[ChunkEntry] = []
        self.end, self._file_end, self._seen_size, self.rebuilt = 0, 0, 0, False
        try:
            size = self.source.stat().st_size
            with open(self.path, "rb") as fh, open(self.source, "rb") as src:
                self._seen_size = fh.seek(0, os.SEEK_END)
                fh.seek(0)
                if fh.read(len(MAGIC)) != MAGIC:
                    self.rebuilt = True
                    return []
                pos = len(MAGIC)
                while True:
                    entry = self._next_chunk(fh, src, pos, size)
                    if entry is None:
                        break
                    entries.append(entry)
                    self.end, pos = entry.end, entry.body_offset + entry.body_len
                self._file_end = pos
                self.rebuilt = self._seen_size > pos
        except OSError:  # no cache yet, or no source: nothing cached
            return []
        return entries

    def _next_chunk(self, fh: Any, src: Any, pos: int, source_size: int) -> ChunkEntry | None:
        fh.seek(pos)
        head = fh.read(HEAD.size)
        if len(head) < HEAD.size:
            return None
        start, end, body_len, head_crc, tail_crc, body_crc = HEAD.unpack(head)
        if start != self.end or not start < end <= source_size or probe_range(src, start, end) != (head_crc, tail_crc):
            return None  # not where the last one ended, or the source is not what it was
        if pos + HEAD.size + body_len > self._seen_size:
            return None  # torn: a writer stopped mid-chunk (a body's CRC is checked when it is loaded)
        return ChunkEntry(start, end, pos + HEAD.size, body_len, body_crc, (head_crc, tail_crc))

    def load(self, entry: ChunkEntry) -> tuple[dict[str, Any], list[np.ndarray]]:
        """The meta and arrays of one chunk ``chunks()`` gave; ValueError when it is no longer there (another
        writer cut it off and wrote over it since)."""
        body = bytearray(entry.body_len)  # writable: the arrays are its views, and the plots may keep them
        with open(self.path, "rb") as fh:
            fh.seek(entry.body_offset)
            got = fh.readinto(body)
        if got != entry.body_len or zlib.crc32(body) != entry.body_crc:
            raise ValueError(f"{self.path.name}: the chunk at {entry.body_offset} changed since it was read")
        return decode_body(body)

    def cut_at(self, entry: ChunkEntry) -> bool:
        """Cut the file back to the chunks before ``entry`` (its body failed its CRC): the next chunk appended
        covers the source from ``entry.start``. False when not cut (another writer holds the file or wrote to it
        since it was read, or the folder cannot be written): nothing is appended then."""
        head = entry.body_offset - HEAD.size
        try:
            with held_if_free(self.path.parent / LOCK_NAME) as held:
                if not held:
                    return False
                with open(self.path, "r+b") as fh:
                    if fh.seek(0, os.SEEK_END) != self._seen_size or head < len(MAGIC):
                        return False
                    fh.truncate(head)
        except OSError:
            return False
        self.end, self._file_end, self._seen_size = entry.start, head, head
        self.rebuilt = True
        return True

    def clear(self) -> None:
        """Start over (the source was replaced): the next chunk covers its beginning."""
        self.end = self._file_end = 0
        self.rebuilt = True

    def append(self, start: int, end: int, meta: dict[str, Any], arrays: list[np.ndarray],
               probe: tuple[int, int] | None = None) -> bool:
        """Add the columns of the source bytes ``start:end``; False when not added (not where the cache
        ends, another writer is writing it or wrote since, or the folder cannot be written). ``probe``: the
        CRCs of the bytes the columns came from (``probe_of``); without it, the source is read for them now."""
        if start != self.end or end <= start:
            return False
        try:
            with held_if_free(self.path.parent / LOCK_NAME) as held:
                if not held:
                    return False
                return self._append_held(start, end, encode_body(meta, arrays), probe)
        except OSError:  # a read-only folder, a full disk: the run works without a cache
            return False

    def _append_held(self, start: int, end: int, body: bytes, probe: tuple[int, int] | None) -> bool:
        if probe is None:
            with open(self.source, "rb") as src:
                probe = probe_range(src, start, end)
        head_crc, tail_crc = probe
        mode = "r+b" if self.path.exists() else "w+b"
        with open(self.path, mode) as fh:
            if fh.seek(0, os.SEEK_END) != self._seen_size:
                return False  # another window wrote to it since this one read it
            if self._file_end == 0:  # the first chunk: the file starts over
                fh.seek(0)
                fh.truncate()
                fh.write(MAGIC)
                self._file_end = len(MAGIC)
            fh.seek(self._file_end)
            fh.truncate()  # a torn or stale tail goes
            fh.write(HEAD.pack(start, end, len(body), head_crc, tail_crc, zlib.crc32(body)) + body)
            self._file_end = self._seen_size = fh.tell()
        self.end = end
        return True
