"""The Watch window's reader of the play tool's frame stream, in a thread of its own (``WorkerThread``).

``read()`` blocks on the child's stdout (``core.run.frame_stream``), so it runs in its own thread and is
steered with thread-safe flags, not signals (its event loop is busy reading): ``pause``/``resume``,
``shown`` (the window took the last frame: at most one frame waits in the GUI's queue, however slow the
drawing), ``stop``. It paces the frames at the env's fps and, while paused, stops reading, so the child
blocks on its next write and waits too. At the end of the stream it waits for the child and reports its
exit code, its result and the last line it wrote to stderr (why an env cannot render, say).
"""

from __future__ import annotations

import dataclasses
import subprocess
import threading
import time
from typing import IO, Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QImage

from core.run.frame_stream import FrameStreamError, StreamEnd, read_record

POLL_S = 0.1  # how soon a stop is noticed while the reader waits on a pause or on the window
CHILD_EXIT_S = 30.0  # a child that sent its last record exits in well under a second (torch's teardown)


class FrameReader(QObject):
    """Signals carry ``generation`` (which start of the child they belong to): a restart ignores a stale one.

    ``frame(generation, QImage, StreamFrame without its bytes)``; ``ended(generation, exit code or None,
    result dict or None, last stderr line)``.
    """

    frame = Signal(int, object, object)
    ended = Signal(int, object, object, str)

    def __init__(self, proc: subprocess.Popen[bytes], stderr: IO[bytes], generation: int):
        super().__init__()
        self.proc = proc
        self.stderr = stderr
        self.generation = generation
        self._playing = threading.Event()
        self._playing.set()
        self._shown = threading.Event()
        self._shown.set()
        self._stop = threading.Event()

    def pause(self) -> None:
        self._playing.clear()

    def resume(self) -> None:
        self._playing.set()

    def shown(self) -> None:
        self._shown.set()

    def stop(self) -> None:
        self._stop.set()
        self._playing.set()
        self._shown.set()

    @Slot()
    def read(self) -> None:
        result: dict[str, Any] | None = None
        error = ""
        try:
            result = self._read_frames()
        except (FrameStreamError, OSError, ValueError) as exc:  # a child ended mid-frame, or not a frame stream
            error = str(exc)
        if self._stop.is_set():
            return
        try:
            code: int | None = self.proc.wait(CHILD_EXIT_S)
        except subprocess.TimeoutExpired:
            code = None
        self.ended.emit(self.generation, code, result, _last_line(self.stderr) or error)

    def _read_frames(self) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        due = time.monotonic()
        while not self._stop.is_set():
            record = read_record(self.proc.stdout)
            if record is None or isinstance(record, StreamEnd):
                return record.result if record is not None else None
            image = QImage(record.rgb, record.width, record.height, record.width * 3, QImage.Format.Format_RGB888).copy()
            if not self._playing.is_set():
                while not self._playing.wait(POLL_S):
                    pass
                due = time.monotonic()
            now = time.monotonic()
            if due > now:
                self._stop.wait(due - now)
            due = max(due + 1.0 / record.fps, time.monotonic() - 1.0 / record.fps)  # late: no burst to catch up
            while not self._shown.wait(POLL_S):
                pass
            self._shown.clear()
            if self._stop.is_set():
                break
            self.frame.emit(self.generation, image, dataclasses.replace(record, rgb=b""))
        return None


def _last_line(stderr: IO[bytes]) -> str:
    """The last line the child wrote to stderr (its one-line error), read from the start of the file."""
    try:
        stderr.seek(0)
        text = stderr.read().decode(errors="replace")
    except (OSError, ValueError):
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
