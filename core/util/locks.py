"""Locks held by the operating system (``filelock``): released when their process ends, however it ends.

A ``kill -9``, a power cut or a crash leaves no stale lock behind, on Windows as on POSIX. Two
kinds are used: ``held_briefly`` around a check-then-act step that two commands may race on
(start a queue, resume a run), and ``ProcessLock`` held for a whole process's life (the queue
runner). Every such lock of rlpanel is made here, so moving the others (``core.run.lock``) onto
the same mechanism is a change in one place.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout


class LockBusy(RuntimeError):
    """Another process holds the lock."""


@contextmanager
def held_briefly(path: Path, timeout_s: float = 30.0, what: str = "this folder") -> Iterator[None]:
    """Hold the lock file ``path`` for a short check-then-act step; wait up to ``timeout_s`` for it."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), is_singleton=False)
    try:
        lock.acquire(timeout=timeout_s)
    except Timeout:
        raise LockBusy(f"another rlpanel command has held {what} for over {timeout_s:g} s ({path}); "
                       "try again in a moment") from None
    try:
        yield
    finally:
        lock.release()


class ProcessLock:
    """A lock held for as long as this process wants it (``acquire`` never waits)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = FileLock(str(self.path), is_singleton=False)

    def acquire(self) -> None:
        """Take the lock now or raise ``LockBusy``."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise LockBusy(f"{self.path} is held by another process") from None

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release()

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return bool(self._lock.is_locked)


def is_held(path: Path) -> bool:
    """Whether some process holds the lock file ``path`` now (taking it for an instant to find out)."""
    if not Path(path).exists():
        return False
    probe = FileLock(str(path), is_singleton=False)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    probe.release()
    return False
