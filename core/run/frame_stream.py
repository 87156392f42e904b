"""The frames a playing agent streams to the Watch window: ``python -m core.agent.play --stream`` writes them,
``app.agent.watch_window`` reads them (this module knows neither torch nor Qt, so both sides share it).

The stream is the child's stdout in binary, one record after another: a 4-byte big-endian length, that
many bytes of UTF-8 JSON (the header), then, for a frame, ``width * height * 3`` bytes of RGB (rows top
to bottom). A frame's header is ``{"kind": "frame", "episode", "step", "reward", "last_reward", "done",
"width", "height", "fps"}``: ``reward`` is the episode's so far, ``fps`` the env's own frame rate
(``render_fps``). The stream ends with ``{"kind": "end", ...}`` (the tool's result) and end of file.

The child writes each frame with a blocking write and flushes it: a pipe holds 64 KiB, less than one
600x400 frame (720,000 bytes), so the child runs at most a frame ahead of the reader and nothing piles up
when the window pauses or paces the frames.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import IO, Any

MAX_HEADER_BYTES = 65_536  # a header is ~150 bytes: more is not a frame stream (something printed to stdout)
MAX_SIDE_PX = 8192
_LENGTH = struct.Struct(">I")


# the words of the player's one-line error when the env gives no pictures (``CartPole-v1 cannot render frames: ...``):
# no restart or other checkpoint changes that, and the Watch window says so instead of offering one
CANNOT_RENDER = "cannot render frames"


class FrameStreamError(ValueError):
    """The stream is not a frame stream or was cut inside a record."""


@dataclass(frozen=True)
class StreamFrame:
    """One picture of the agent playing and where it is: episode (from 1), step in it (0: after the reset)."""

    episode: int
    step: int
    reward: float
    last_reward: float
    done: bool
    width: int
    height: int
    fps: float
    rgb: bytes

    def header(self) -> dict[str, Any]:
        return {"kind": "frame", "episode": self.episode, "step": self.step, "reward": self.reward,
                "last_reward": self.last_reward, "done": self.done, "width": self.width, "height": self.height,
                "fps": self.fps}


@dataclass(frozen=True)
class StreamEnd:
    """The last record: the tool's result (its episodes and rewards)."""

    result: dict[str, Any]


def write_frame(out: IO[bytes], frame: StreamFrame) -> None:
    """Write one frame and flush it (blocks while the reader is a frame behind)."""
    if len(frame.rgb) != frame.width * frame.height * 3:
        raise ValueError(f"a {frame.width}x{frame.height} frame has {frame.width * frame.height * 3:,} RGB bytes, "
                         f"not {len(frame.rgb):,}")
    _write_header(out, frame.header())
    out.write(frame.rgb)
    out.flush()


def write_end(out: IO[bytes], result: dict[str, Any]) -> None:
    _write_header(out, {"kind": "end", **result})
    out.flush()


def _write_header(out: IO[bytes], header: dict[str, Any]) -> None:
    data = json.dumps(header, default=str).encode()
    out.write(_LENGTH.pack(len(data)))
    out.write(data)


def read_record(inp: IO[bytes]) -> StreamFrame | StreamEnd | None:
    """The next record, or None at the end of the stream (the child ended or was ended)."""
    raw = _read_exact(inp, _LENGTH.size, at_start=True)
    if raw is None:
        return None
    (length,) = _LENGTH.unpack(raw)
    if not 0 < length <= MAX_HEADER_BYTES:
        raise FrameStreamError(f"a record header of {length:,} bytes: this is not a frame stream")
    try:
        header = json.loads(_read_exact(inp, length) or b"")
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise FrameStreamError("a record header that is not JSON: this is not a frame stream") from None
    if not isinstance(header, dict):
        raise FrameStreamError("a record header that is not a JSON object")
    if header.get("kind") == "end":
        return StreamEnd({k: v for k, v in header.items() if k != "kind"})
    try:
        width, height = int(header["width"]), int(header["height"])
        if not (0 < width <= MAX_SIDE_PX and 0 < height <= MAX_SIDE_PX):
            raise FrameStreamError(f"a frame of {width}x{height} pixels")
        return StreamFrame(int(header["episode"]), int(header["step"]), float(header["reward"]),
                           float(header["last_reward"]), bool(header["done"]), width, height, float(header["fps"]),
                           _read_exact(inp, width * height * 3) or b"")
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, FrameStreamError):
            raise
        raise FrameStreamError(f"a frame header without a readable {exc}") from None


def _read_exact(inp: IO[bytes], size: int, at_start: bool = False) -> bytes | None:
    """``size`` bytes; None at a clean end of file before a record; ``FrameStreamError`` inside one."""
    parts: list[bytes] = []
    got = 0
    while got < size:
        chunk = inp.read(size - got)
        if not chunk:
            if at_start and got == 0:
                return None
            raise FrameStreamError(f"the stream ended inside a record ({got:,} of {size:,} bytes)")
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)
