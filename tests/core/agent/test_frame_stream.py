"""The Watch window's frame stream (core.run.frame_stream): what the player writes is what the window reads."""

from __future__ import annotations

import io

import pytest

from core.run.frame_stream import FrameStreamError, StreamEnd, StreamFrame, read_record, write_end, write_frame


def frame(step: int, width: int = 3, height: int = 2) -> StreamFrame:
    return StreamFrame(1, step, float(step), 1.0, False, width, height, 50.0, bytes(range(step, step + width * height * 3)))


def test_frames_and_the_end_come_back_as_written():
    out = io.BytesIO()
    for step in range(3):
        write_frame(out, frame(step))
    write_end(out, {"episodes": 1, "rewards": [2.0]})
    inp = io.BytesIO(out.getvalue())
    assert [read_record(inp) for _ in range(3)] == [frame(0), frame(1), frame(2)]
    assert read_record(inp) == StreamEnd({"episodes": 1, "rewards": [2.0]})
    assert read_record(inp) is None


def test_a_stream_cut_inside_a_frame_or_not_a_stream_says_so():
    out = io.BytesIO()
    write_frame(out, frame(0))
    with pytest.raises(FrameStreamError, match="ended inside a record"):
        read_record(io.BytesIO(out.getvalue()[:-5]))
    with pytest.raises(FrameStreamError, match="not a frame stream"):
        read_record(io.BytesIO(b"Hello from pygame\n" + b"x" * 100))
    with pytest.raises(ValueError, match="RGB bytes"):
        write_frame(io.BytesIO(), StreamFrame(1, 0, 0.0, 0.0, False, 3, 2, 50.0, b"short"))
