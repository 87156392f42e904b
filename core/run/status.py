"""``status.json``: where a run stands, written by its one writer and read by everyone.

A run whose status says a worker should be running but whose worker process is gone reads as
``crashed`` (with ``recorded_state`` keeping what the file says); that reading is never written.
Only a worker on this machine is checked (``host``); a run on a Ray cluster (``ray`` in its status)
waiting for its job to start is not, and ``core.cluster.jobs.settle_cluster_run`` asks Ray about it.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from core.run.layout import RunDir
from core.run.states import ACTIVE, BROKEN, LIVE, STARTING_GRACE_S, TERMINAL
from core.util.files import read_json, write_json_atomic
from core.util.procs import is_alive, module_running

_NUMBER = (int, float)
# The type each known field must have; a field of another type is dropped (and named in "problems").
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "state": (str,), "id": (str,), "pid": (int,), "pid_create_time": _NUMBER, "host": (str,), "preset": (str,),
    "created_at": _NUMBER, "updated_at": _NUMBER, "launched_at": _NUMBER, "started_at": _NUMBER, "ended_at": _NUMBER,
    "train_time_s": _NUMBER, "attempt": (int,), "error": (dict,), "exit_reason": (str,), "warnings": (list,),
    "queue": (dict,), "ray": (dict,), "resumed_from": (str,), "notes": (list,), "pause_reason": (str,), "paused_s": _NUMBER,
    "estimate_gpu": (dict,),
    "planned_timesteps": (int,),
}
KNOWN_STATES = (*ACTIVE, *TERMINAL)
WORKER_MODULE = "core.training.worker"  # what a worker's command line runs (its supervisor starts it)
SUPERVISOR_MODULE = "core.notify.supervisor"  # what core.run.control starts: it starts the worker and reports its end
LAUNCH_CHECK_S = 5.0  # a launched worker's process exists from the spawn on: past this, no process means it died


def clean_status(raw: Any) -> dict[str, Any]:
    """A status from whatever ``status.json`` held: fields of the wrong type are dropped and named
    in ``problems``; a file that is no status at all reads as state ``broken`` with the reason."""
    if raw is None:
        return {"state": "unknown"}
    if not isinstance(raw, dict):
        return {"state": BROKEN, "broken": f"status.json holds a {type(raw).__name__}, not a status mapping"}
    status: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        want = FIELD_TYPES.get(str(key))
        if want is not None and value is not None and (not isinstance(value, want) or isinstance(value, bool)):
            problems.append(f"{key} is a {type(value).__name__}")
            continue
        status[str(key)] = value
    if isinstance(status.get("error"), dict):
        status["error"] = {k: v if isinstance(v, str) else str(v) for k, v in status["error"].items()}
    if isinstance(status.get("warnings"), list):
        status["warnings"] = [str(w) for w in status["warnings"]]
    if isinstance(status.get("notes"), list):
        status["notes"] = [str(n) for n in status["notes"]]
    if problems:
        status["problems"] = problems
    if status.get("state") not in KNOWN_STATES:
        why = f"state {raw.get('state')!r} is not a run state" if "state" in raw else "it names no state"
        status.update(state=BROKEN, broken="; ".join([f"status.json: {why}", *problems]))
    return status


def read_status(run_dir: Path) -> dict[str, Any]:
    """The run's status, with ``state`` turned to ``crashed`` when its worker is gone (and to
    ``broken`` when ``status.json`` is not a status: the reason is in ``broken``)."""
    path = RunDir(run_dir).status
    raw = read_json(path, default=None)
    status = clean_status(raw)
    if raw is None and path.exists():
        status = {"state": BROKEN, "broken": "status.json is not valid JSON (or not readable)"}
    state = status.get("state")
    if state in LIVE and status.get("host", socket.gethostname()) == socket.gethostname():
        pid = status.get("pid")
        if pid is None and status.get("ray"):
            pass  # a Ray job not started yet (pending for resources): its liveness is Ray's to say (core.cluster.jobs)
        elif pid is None:
            since = status.get("updated_at", 0)
            if state != "starting" or time.time() - since > STARTING_GRACE_S or _never_started(run_dir, since):
                status = {**status, "state": "crashed", "recorded_state": state,
                          "error": status.get("error") or {"message": "the worker never started (see worker.log)"}}
        elif not is_alive(pid, status.get("pid_create_time")):
            status = {**status, "state": "crashed", "recorded_state": state,
                      "error": status.get("error") or {"message": f"the worker (pid {pid}) ended without a word; see worker.log"}}
    return status


def _never_started(run_dir: Path, since: float) -> bool:
    """A run ``starting`` without a pid for a few seconds whose worker process is not there (killed
    before it could write its pid) reads as crashed now, not after ``STARTING_GRACE_S``."""
    return (time.time() - since > LAUNCH_CHECK_S and not module_running(WORKER_MODULE, run_dir)
            and not module_running(SUPERVISOR_MODULE, run_dir))


def write_status(run_dir: Path, **changes: Any) -> dict[str, Any]:
    """Update status.json atomically; only the run's single writer calls this."""
    path = RunDir(run_dir).status
    status = read_json(path, default=None)
    status = status if isinstance(status, dict) else {}  # a damaged file is replaced, not a reason to fail
    status.update(changes)
    status["updated_at"] = time.time()
    write_json_atomic(path, status)
    return status
