"""Following a JSONL file that a resume replaces under the reader."""

from __future__ import annotations

import json

from core.util.files import write_atomic
from core.util.jsonl import JsonlReader


def lines(*steps: int) -> str:
    return "".join(json.dumps({"kind": "progress", "step": s}) + "\n" for s in steps)


def test_a_file_replaced_by_a_longer_one_is_read_again_from_its_start(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(lines(1, 2, 3))
    reader = JsonlReader(path)
    assert [r["step"] for r in reader.read_new()] == [1, 2, 3]
    # a resume keeps steps 1-2 and the new attempt appends more than it moved aside before the next read
    write_atomic(path, lines(1, 2, 10, 11, 12))
    assert [r["step"] for r in reader.read_new()] == [1, 2, 10, 11, 12] and reader.restarts == 1
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(lines(13))
    assert [r["step"] for r in reader.read_new()] == [13] and reader.restarts == 1  # appended: read on
