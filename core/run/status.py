"""``status.json``: where a run stands, written by its one writer and read by everyone.

A run whose status says a worker should be running but whose worker process is gone reads as
``crashed`` (with ``recorded_state`` keeping what the file says); that reading is never written.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from core.run.layout import RunDir
from core.run.states import LIVE, STARTING_GRACE_S
from core.util.files import read_json, write_json_atomic
from core.util.procs import is_alive


def read_status(run_dir: Path) -> dict[str, Any]:
    """The run's status, with ``state`` turned to ``crashed`` when its worker is gone."""
    status = read_json(RunDir(run_dir).status, default=None) or {"state": "unknown"}
    state = status.get("state")
    if state in LIVE and status.get("host", socket.gethostname()) == socket.gethostname():
        pid = status.get("pid")
        if pid is None:
            since = status.get("updated_at", 0)
            if state != "starting" or time.time() - since > STARTING_GRACE_S:
                status = {**status, "state": "crashed", "recorded_state": state,
                          "error": status.get("error") or {"message": "the worker never started (see worker.log)"}}
        elif not is_alive(pid, status.get("pid_create_time")):
            status = {**status, "state": "crashed", "recorded_state": state,
                      "error": status.get("error") or {"message": f"the worker (pid {pid}) ended without a word; see worker.log"}}
    return status


def write_status(run_dir: Path, **changes: Any) -> dict[str, Any]:
    """Update status.json atomically; only the run's single writer calls this."""
    path = RunDir(run_dir).status
    status = read_json(path, default=None) or {}
    status.update(changes)
    status["updated_at"] = time.time()
    write_json_atomic(path, status)
    return status
