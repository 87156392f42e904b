"""Locks held by the operating system (``filelock``): released when their process ends, however it ends.

A ``kill -9``, a power cut or a crash leaves no stale lock behind, on Windows as on POSIX.
``held_briefly`` guards a check-then-act step that two commands may race on (start a queue,
resume a run). The workers' and the queue runner's long-held locks are still ``core.run.lock``;
moving them onto filelock means adding a long-held kind here.
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


@contextmanager
def held_if_free(path: Path) -> Iterator[bool]:
    """Hold the lock file ``path`` if no one else does (yields True), else do without it (yields False).

    For work another process may be doing just as well (a cache two windows could both extend).
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), is_singleton=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
