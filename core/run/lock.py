"""One writer per run (and per queue): an OS lock on ``worker.lock``, through ``filelock``.

The operating system holds the lock (``flock`` on POSIX, ``LockFileEx`` on Windows) and drops it
when its process ends, however it ends: a crashed or killed worker leaves no stale lock to race
over. Who holds it is in ``status.json`` (pid and start time), not in the lock file.
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout


class RunLock:
    """One writer per run: ``acquire`` raises ``RuntimeError`` while another process holds it.

    Keep the object while holding the lock: filelock releases it when the object is collected.
    """

    def __init__(self, folder: Path):
        self.path = Path(folder) / "worker.lock"
        self._lock = FileLock(str(self.path), timeout=0)

    def acquire(self) -> None:
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise RuntimeError(f"run {self.path.parent.name} is already being written by another process "
                               "(its pid is in status.json)") from None

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release()
