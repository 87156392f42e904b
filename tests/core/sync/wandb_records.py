"""The records of a W&B offline run file (``run-ID.wandb``), parsed by wandb's own protobuf ``Record``.

wandb 0.31 keeps no Python reader of its transaction log (its Go core reads it); the framing is LevelDB's log
format (32 KiB blocks; each chunk a 7-byte header: CRC, length, type full/first/middle/last) after a 7-byte
``:W&B`` header. Only the framing is read here; every record is wandb's message, parsed by wandb.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

BLOCK, HEADER, FILE_HEADER = 32768, 7, 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def wandb_records(path: Path) -> Iterator[object]:
    from wandb.proto import wandb_internal_pb2

    data = Path(path).read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B run file"
    pos, parts = FILE_HEADER, b""
    while pos + HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < HEADER:  # a block's tail too short for a header is padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + HEADER])
        if length == 0 and kind == 0:
            pos += left
            continue
        chunk = data[pos + HEADER:pos + HEADER + length]
        pos += HEADER + length
        parts = chunk if kind in (FULL, FIRST) else parts + chunk
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(parts)
            yield record


def history_rows(path: Path) -> list[dict[str, str]]:
    """Each history row as {key: its JSON value}."""
    return [{item.key or "/".join(item.nested_key): item.value_json for item in r.history.item}
            for r in wandb_records(path) if r.WhichOneof("record_type") == "history"]
