"""One writer per run (and per queue): a lock file naming its holder's pid and start time."""

from __future__ import annotations

import json
import os
from pathlib import Path

from core.util.files import read_json
from core.util.procs import is_alive, process_identity


class RunLock:
    """One writer per run: a lock file naming its holder's pid and start time.

    A lock left by a dead process (``kill -9``) is stale and taken over.
    """

    def __init__(self, folder: Path):
        self.path = Path(folder) / "worker.lock"

    def acquire(self) -> None:
        ident = process_identity()
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = read_json(self.path, default={}) or {}
                if is_alive(holder.get("pid"), holder.get("pid_create_time")) and holder.get("pid") != ident["pid"]:
                    pid = holder.get("pid")
                    raise RuntimeError(f"run {self.path.parent.name} is already being written by pid {pid}") from None
                self.path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(json.dumps(ident))
            return
        raise RuntimeError(f"could not lock {self.path}")

    def release(self) -> None:
        holder = read_json(self.path, default={}) or {}
        if holder.get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)
