"""The queue's state file as typed records: ``QueueState`` and its ``QueueJob`` rows, with one reader.

``<runs>/.queue/state.json`` is written by the queue runner and by ``start_queue``/``cancel_queue``, and
read by the window, ``rlpanel queue status``, the morning report and the notifier. Every write puts
``"queue_version": 2`` in the file; a file without it (version 1, written before the records were typed)
reads the same way, a missing key as None. Keys a newer version wrote are kept in ``extra`` and written
back, so an older rlpanel continuing a newer queue loses nothing. Layers below ``core.queue`` (the
morning report, the notification text) take ``to_json()``: plain data, the same keys as the file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

QUEUE_VERSION = 2
WAITING, LAUNCHING, RUNNING = "waiting", "launching", "running"


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _mapping(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, dict) else None


@dataclass
class QueueJob:
    """One job of the plan as the runner follows it: its status, its run once launched, why it ended."""

    name: str
    status: str = WAITING
    run_id: str | None = None
    reason: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    node: str | None = None  # the Ray node that runs it (a cluster queue)
    base: str | None = None  # the plan job this is one seed of (its name is ``<base>#seed<seed>``)
    seed: int | None = None
    group: dict[str, Any] | None = None  # the run's status ``group``: {id, seed, size, name}
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> QueueJob:
        data = data if isinstance(data, dict) else {}
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        return cls(name=str(data.get("name") or "?"), status=str(data.get("status") or WAITING),
                   run_id=_text(data.get("run_id")), reason=_text(data.get("reason")),
                   started_at=_number(data.get("started_at")), ended_at=_number(data.get("ended_at")),
                   node=_text(data.get("node")), base=_text(data.get("base")), seed=_int(data.get("seed")),
                   group=_mapping(data.get("group")), extra={k: v for k, v in data.items() if k not in known})

    def to_json(self) -> dict[str, Any]:
        out = {**self.extra, "name": self.name, "status": self.status, "run_id": self.run_id, "reason": self.reason,
               "started_at": self.started_at, "ended_at": self.ended_at}
        optional = {"node": self.node, "base": self.base, "seed": self.seed, "group": self.group}
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    @property
    def plan_name(self) -> str:
        """The plan job it runs: its own name, or the job it is one seed of."""
        return self.base or self.name

    @property
    def launched(self) -> bool:
        """Launching or running, with its run recorded."""
        return self.status in (LAUNCHING, RUNNING) and bool(self.run_id)


@dataclass(frozen=True)
class StartupEntry:
    """The per-user start-up entry that resumes the queue after a restart (``core.queue.autostart``).

    ``kind``: ``task`` (a Windows Task Scheduler task at log-on), ``startup`` (a file in the Windows Startup
    folder, when Task Scheduler refused) or ``xdg`` (a Linux XDG autostart entry); ``where``: the task's name or
    the file's path; ``note``: why a fallback was taken (empty when none was).
    """

    kind: str
    where: str
    note: str = ""

    @classmethod
    def from_json(cls, data: Any) -> StartupEntry | None:
        if not isinstance(data, dict) or not data.get("kind") or not data.get("where"):
            return None
        return cls(kind=str(data["kind"]), where=str(data["where"]), note=str(data.get("note") or ""))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": self.where, **({"note": self.note} if self.note else {})}

    def describe(self) -> str:
        """Where it is, in words: ``rlpanel queue status`` and the Queue tab say "resumes after a restart: " this."""
        if self.kind == "task":
            return f"the Task Scheduler task {self.where} (at log-on)"
        if self.kind == "startup":
            return f"the Startup-folder file {self.where}"
        return f"the autostart entry {self.where}"


@dataclass
class QueueState:
    """The whole queue: its plan (as the file holds it), its state, its jobs and its runner.

    ``recorded_state`` is set by a reading only (``read_queue``: ``state`` reads ``crashed`` when the runner
    is gone) and never written.
    """

    id: str
    plan: dict[str, Any]
    state: str
    jobs: list[QueueJob]
    plan_path: str | None = None
    created_at: float | None = None
    launched_at: float | None = None
    updated_at: float | None = None
    ended_at: float | None = None
    runner: dict[str, Any] | None = None  # the runner's process identity (pid, pid_create_time), once it holds the lock
    restarts: int | None = None
    error: str | None = None
    ray: dict[str, Any] | None = None  # the Ray cluster its jobs go to (core.cluster.target.ClusterTarget.to_json())
    survive_reboot: StartupEntry | None = None  # the start-up entry that resumes it after a restart, while registered
    import_folder: str | None = None  # where its jobs' custom envs are imported from (the folder it was started in)
    recorded_state: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueueState:
        """The one reader of the state file's data (version 1 or 2; unknown keys kept)."""
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"} | {"queue_version"}
        restarts = data.get("restarts")
        return cls(
            id=str(data.get("id") or "?"), plan=_mapping(data.get("plan")) or {}, state=str(data.get("state") or "?"),
            jobs=[QueueJob.from_json(j) for j in data.get("jobs") or [] if isinstance(j, dict)],
            plan_path=_text(data.get("plan_path")), created_at=_number(data.get("created_at")),
            launched_at=_number(data.get("launched_at")), updated_at=_number(data.get("updated_at")),
            ended_at=_number(data.get("ended_at")), runner=_mapping(data.get("runner")),
            restarts=restarts if isinstance(restarts, int) and not isinstance(restarts, bool) else None,
            error=_text(data.get("error")), ray=_mapping(data.get("ray")),
            survive_reboot=StartupEntry.from_json(data.get("survive_reboot")), import_folder=_text(data.get("import_folder")),
            recorded_state=_text(data.get("recorded_state")),
            extra={k: v for k, v in data.items() if k not in known})

    def to_json(self) -> dict[str, Any]:
        """The file's data (``recorded_state`` only when a reading set it; never written by ``write_queue``)."""
        out: dict[str, Any] = {**self.extra, "queue_version": QUEUE_VERSION, "id": self.id, "plan_path": self.plan_path,
                               "plan": self.plan, "state": self.state, "created_at": self.created_at,
                               "runner": self.runner, "jobs": [j.to_json() for j in self.jobs]}
        optional = {"launched_at": self.launched_at, "updated_at": self.updated_at, "ended_at": self.ended_at,
                    "restarts": self.restarts, "error": self.error, "ray": self.ray, "recorded_state": self.recorded_state,
                    "survive_reboot": self.survive_reboot.to_json() if self.survive_reboot else None,
                    "import_folder": self.import_folder}
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    @property
    def parallel(self) -> int:
        """Jobs at once (the plan's ``parallel``)."""
        value = self.plan.get("parallel", 1)
        return int(value) if isinstance(value, int) and value > 0 else 1

    @property
    def on_failure(self) -> str:
        return str(self.plan.get("on_failure") or "continue")

    def plan_entry(self, name: str) -> dict[str, Any]:
        """The plan's data for job ``name`` (validated by ``core.queue.state.plan_job``); a seed's, its plan job's."""
        name = self.plan_name(name)
        return next((j for j in self.plan.get("jobs") or [] if isinstance(j, dict) and j.get("name") == name), {})

    def plan_name(self, name: str) -> str:
        """The plan job queue job ``name`` runs (itself, or the job it is one seed of)."""
        return next((j.plan_name for j in self.jobs if j.name == name), name)

    def after(self, name: str) -> list[str]:
        """The plan jobs job ``name`` waits for (a job with seeds: all of its seeds)."""
        return [str(a) for a in self.plan_entry(name).get("after") or []]

    def job(self, name: str) -> QueueJob:
        return next(j for j in self.jobs if j.name == name)
