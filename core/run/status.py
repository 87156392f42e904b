"""``status.json``: where a run stands, written by its one writer and read by everyone.

The file is one typed record: ``StatusFields`` names every key a writer may set (mypy refuses any
other key or a value of another type, and ``write_status`` refuses them at run time too), and
``RunStatus`` is what every reader gets from the one parser, ``parse_status``. The file carries
``status_version``; a file of an older version (no version, keys missing) reads with those fields
``None``, and keys this version does not know (written by a newer one) are kept in ``extra`` and
left in the file by ``write_status``.

A run whose status says a worker should be running but whose worker process is gone reads as
``crashed`` (with ``recorded_state`` keeping what the file says); that reading is never written.
Nor is ``stalled``: a running run whose worker is alive but takes no step (``_stall_reading``).
Only a worker on this machine is checked (``host``); a run on a Ray cluster (``ray`` in its status)
waiting for its job to start is not, and ``core.cluster.jobs.settle_cluster_run`` asks Ray about it.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TypedDict

from typing_extensions import Unpack

from core.run.layout import RunDir
from core.run.states import ACTIVE, BROKEN, LIVE, STALLED, STARTING_GRACE_S, TERMINAL
from core.util.files import read_json, write_json_atomic
from core.util.procs import is_alive, module_running

STATUS_VERSION = 2  # 1: the files written before the version was (no status_version key)


class StatusFields(TypedDict, total=False):
    """Every key a writer sets in ``status.json`` (``None`` clears a field); ``updated_at`` and
    ``status_version`` are ``write_status``'s own."""

    state: str
    id: str
    pid: int | None
    pid_create_time: float | None
    host: str
    preset: str | None
    created_at: float
    launched_at: float | None
    started_at: float | None
    ended_at: float | None
    restarted_at: float | None
    train_time_s: float
    train_cpu_s: float  # the worker process's CPU seconds while training (all its threads), over the attempts
    attempt: int
    error: dict[str, str] | None  # message, and a failure's traceback (its last lines)
    exit_reason: str | None
    warnings: list[str]
    notes: list[str] | None
    queue: dict[str, Any]  # a queue job's run: the queue and job it belongs to
    sweep: dict[str, Any]  # a sweep trial's run: {name, study, trial}
    group: dict[str, Any]  # a run of a seed group: {id, seed, size} (core.results.grouping reads it)
    ray: dict[str, Any] | None  # a cluster run: address, python, runs, job_id, submitted_at, resources
    resumed_from: str | None
    pause_reason: str | None
    paused_s: float
    estimate_gpu: dict[str, Any] | None
    planned_timesteps: int | None
    keep_awake_warned: str
    device: str
    env_restarts: int  # env processes replaced mid-run (a step past env.step_timeout_s, a restart asked for)
    stalled: dict[str, Any] | None  # the watchdog's finding: {since, step, limit_s, action} (core.worker.watchdog)
    stall_limit_s: float | None  # the stall limit in force (readers judge a worker that cannot say so itself)
    failure_kind: str | None  # what ended a failed or crashed attempt (core.launch.auto_resume.KINDS)
    auto_resume: dict[str, Any] | None  # {count, limit, history, due_at, gave_up} (core.launch.auto_resume)
    time_split: dict[str, Any] | None  # where the update cycles' time went so far (core.run.time_split), over the attempts


_NUMBER = (int, float)
# The JSON type of each field: a field of another type in a file is dropped (and named in "problems");
# a write of another type is refused.
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "state": (str,), "id": (str,), "pid": (int,), "pid_create_time": _NUMBER, "host": (str,), "preset": (str,),
    "created_at": _NUMBER, "updated_at": _NUMBER, "launched_at": _NUMBER, "started_at": _NUMBER, "ended_at": _NUMBER,
    "restarted_at": _NUMBER, "train_time_s": _NUMBER, "attempt": (int,), "error": (dict,), "exit_reason": (str,),
    "warnings": (list,), "notes": (list,), "queue": (dict,), "sweep": (dict,), "group": (dict,), "ray": (dict,),
    "resumed_from": (str,),
    "pause_reason": (str,), "paused_s": _NUMBER, "estimate_gpu": (dict,), "planned_timesteps": (int,),
    "keep_awake_warned": (str,), "device": (str,), "env_restarts": (int,), "status_version": (int,),
    "train_cpu_s": _NUMBER, "stalled": (dict,), "stall_limit_s": _NUMBER, "failure_kind": (str,), "auto_resume": (dict,),
    "time_split": (dict,),
}
_WRITERS_OWN = ("updated_at", "status_version")
KNOWN_STATES = (*ACTIVE, *TERMINAL)
WORKER_MODULE = "core.worker.main"  # what a worker's command line runs (its supervisor starts it)
SUPERVISOR_MODULE = "core.launch.supervisor"  # what core.launch.control starts: it starts the worker and reports its end
LAUNCH_CHECK_S = 5.0  # a launched worker's process exists from the spawn on: past this, no process means it died


@dataclass(frozen=True)
class RunStatus:
    """``status.json`` as read: a field the file lacks (an older version) or holds with the wrong
    type is ``None``; the last four fields are the reading's own and never written."""

    state: str = "unknown"
    id: str | None = None
    pid: int | None = None
    pid_create_time: float | None = None
    host: str | None = None
    preset: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    launched_at: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    restarted_at: float | None = None
    train_time_s: float | None = None
    train_cpu_s: float | None = None
    attempt: int | None = None
    error: dict[str, str] | None = None
    exit_reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    queue: dict[str, Any] | None = None
    sweep: dict[str, Any] | None = None
    group: dict[str, Any] | None = None
    ray: dict[str, Any] | None = None
    resumed_from: str | None = None
    pause_reason: str | None = None
    paused_s: float | None = None
    estimate_gpu: dict[str, Any] | None = None
    planned_timesteps: int | None = None
    keep_awake_warned: str | None = None
    device: str | None = None
    env_restarts: int | None = None
    stalled: dict[str, Any] | None = None
    stall_limit_s: float | None = None
    failure_kind: str | None = None
    auto_resume: dict[str, Any] | None = None
    time_split: dict[str, Any] | None = None
    status_version: int | None = None  # None: a file from before the version was written (version 1)
    broken: str | None = None  # why the file is no status (state is then "broken")
    problems: tuple[str, ...] = ()  # fields of the wrong type, dropped
    recorded_state: str | None = None  # what the file says, when the reading says "crashed"
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know (a newer one wrote them)

    @property
    def error_message(self) -> str | None:
        return (self.error or {}).get("message") or None

    def to_json(self) -> dict[str, Any]:
        """The fields that hold a value, and the unknown keys as read (``rlpanel runs --json``)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out = {k: list(v) if isinstance(v, tuple) else v for k, v in out.items() if v not in (None, ())}
        return {**out, **self.extra}


_RUN_STATUS_FIELDS = frozenset(f.name for f in fields(RunStatus))
_READING_ONLY = ("broken", "problems", "recorded_state", "extra")
assert set(FIELD_TYPES) == set(StatusFields.__annotations__) | set(_WRITERS_OWN)
assert set(FIELD_TYPES) == _RUN_STATUS_FIELDS - set(_READING_ONLY)


def _type_problem(key: str, value: Any) -> str | None:
    want = FIELD_TYPES.get(key)
    if want is None or value is None or (isinstance(value, want) and not isinstance(value, bool)):
        return None
    return f"{key} is a {type(value).__name__}"


def parse_status(raw: Any) -> RunStatus:
    """The one reader of what ``status.json`` held: fields of the wrong type are dropped and named
    in ``problems``, unknown keys go to ``extra``; a file that is no status at all reads as state
    ``broken`` with the reason (``None``, no file, reads as state ``unknown``)."""
    if raw is None:
        return RunStatus()
    if not isinstance(raw, dict):
        return RunStatus(state=BROKEN, broken=f"status.json holds a {type(raw).__name__}, not a status mapping")
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    problems: list[str] = []
    for raw_key, value in raw.items():
        key = str(raw_key)
        if key not in FIELD_TYPES:
            if key not in _READING_ONLY:
                extra[key] = value
        elif (problem := _type_problem(key, value)) is not None:
            problems.append(problem)
        elif value is not None:
            known[key] = value
    for key in ("pid_create_time", "created_at", "updated_at", "launched_at", "started_at", "ended_at",
                "restarted_at", "train_time_s", "train_cpu_s", "paused_s", "stall_limit_s"):
        if key in known:
            known[key] = float(known[key])
    if "error" in known:
        known["error"] = {str(k): v if isinstance(v, str) else str(v) for k, v in known["error"].items()}
    for key in ("warnings", "notes"):
        if key in known:
            known[key] = [str(w) for w in known[key]]
    status = RunStatus(**known, problems=tuple(problems), extra=extra)
    if status.state not in KNOWN_STATES:
        why = f"state {raw.get('state')!r} is not a run state" if "state" in raw else "it names no state"
        status = replace(status, state=BROKEN, broken="; ".join([f"status.json: {why}", *problems]))
    return status


def read_recorded_status(run_dir: Path) -> RunStatus:
    """The run's status as written (no check of its worker): its writers read it so."""
    path = RunDir(run_dir).status
    raw = read_json(path, default=None)
    if raw is None and path.exists():
        return RunStatus(state=BROKEN, broken="status.json is not valid JSON (or not readable)")
    return parse_status(raw)


def read_status(run_dir: Path) -> RunStatus:
    """The run's status, with ``state`` turned to ``crashed`` when its worker is gone (and to
    ``broken`` when ``status.json`` is not a status: the reason is in ``broken``)."""
    status = read_recorded_status(run_dir)
    state = status.state
    if state in LIVE and (status.host or socket.gethostname()) == socket.gethostname():
        pid = status.pid
        if pid is None and status.ray:
            pass  # a Ray job not started yet (pending for resources): its liveness is Ray's to say (core.cluster.jobs)
        elif pid is None:
            since = status.updated_at or 0.0
            if state != "starting" or time.time() - since > STARTING_GRACE_S or _never_started(run_dir, since):
                status = replace(status, state="crashed", recorded_state=state,
                                 error=status.error or {"message": "the worker never started (see worker.log)"})
        elif not is_alive(pid, status.pid_create_time):
            status = replace(status, state="crashed", recorded_state=state,
                             error=status.error or {"message": f"the worker (pid {pid}) ended without a word; see worker.log"})
        elif state == "running":
            status = _stall_reading(run_dir, status)
    return status


READER_STALL_FACTOR = 2.0  # a worker silent for this many stall limits is stalled, even if its watchdog could not say so
READER_STALL_MIN_S = 600.0


def stall_note(status: RunStatus) -> str | None:
    """``no step since 03:12 (step 12,288)``: a stalled run's line wherever it is shown; None when it is not stalled."""
    if status.state != STALLED:
        return None
    stalled = status.stalled or {}
    since, step = stalled.get("since"), stalled.get("step")
    when = time.strftime("%H:%M", time.localtime(since)) if isinstance(since, (int, float)) else "a while"
    return f"no step since {when}" + (f" (step {step:,})" if isinstance(step, int) else "")


def _stall_reading(run_dir: Path, status: RunStatus) -> RunStatus:
    """A running run reads ``stalled`` when its watchdog said so, or when its records have not grown for
    ``READER_STALL_FACTOR`` times the limit it announced (a worker too wedged for its watchdog thread to write)."""
    if status.stalled:
        return replace(status, state=STALLED, recorded_state="running")
    limit = status.stall_limit_s
    if not limit:
        return status
    try:
        silent = time.time() - RunDir(run_dir).metrics.stat().st_mtime
    except OSError:
        return status
    if silent <= max(READER_STALL_FACTOR * limit, READER_STALL_MIN_S):
        return status
    return replace(status, state=STALLED, recorded_state="running",
                   stalled={"since": time.time() - silent, "limit_s": limit, "by": "reader"})


def _never_started(run_dir: Path, since: float) -> bool:
    """A run ``starting`` without a pid for a few seconds whose worker process is not there (killed
    before it could write its pid) reads as crashed now, not after ``STARTING_GRACE_S``."""
    return (time.time() - since > LAUNCH_CHECK_S and not module_running(WORKER_MODULE, run_dir)
            and not module_running(SUPERVISOR_MODULE, run_dir))


def new_status(**fields_: Unpack[StatusFields]) -> dict[str, Any]:
    """A new run's whole status file (``core.run.store`` creates it), checked as ``write_status`` checks."""
    _check(fields_)
    return {**fields_, "status_version": STATUS_VERSION}


def _check(changes: StatusFields) -> None:
    for key, value in changes.items():
        if key not in FIELD_TYPES or key in _WRITERS_OWN:
            raise TypeError(f"status.json has no field {key!r} a writer sets")
        if (problem := _type_problem(key, value)) is not None:
            raise TypeError(f"status.json: {problem}, not a {' or '.join(t.__name__ for t in FIELD_TYPES[key])}")


def write_status(run_dir: Path, **changes: Unpack[StatusFields]) -> None:
    """Update status.json atomically; only the run's single writer calls this. A key the file holds
    and this version does not know (a newer version wrote it) is kept."""
    _check(changes)
    path = RunDir(run_dir).status
    with _WRITE_LOCK:  # the worker's watchdog thread writes too: no read-modify-write may lose another's key
        stored = read_json(path, default=None)
        stored = stored if isinstance(stored, dict) else {}  # a damaged file is replaced, not a reason to fail
        stored.update(changes)
        stored["updated_at"] = time.time()
        stored["status_version"] = max(STATUS_VERSION, _int_or_0(stored.get("status_version")))
        write_json_atomic(path, stored)


_WRITE_LOCK = threading.Lock()


def _int_or_0(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
