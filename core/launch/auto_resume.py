"""Automatic resume of a crashed run (issue 28): ``runtime.auto_resume`` times, after a back-off, never a failure
that would repeat.

A CUDA error, a driver reset (Windows' TDR), an out-of-memory kill or a power blip ends an
attempt; at 3 am nobody presses Resume. A run whose ``runtime.auto_resume`` allows it (default: 2
for a queued run, 0 for others) is resumed from its newest complete checkpoint by itself, after
``runtime.auto_resume_after_s`` (doubled for each further resume). Never when the failure would
only come again (``NEVER``: its config, a NaN loss, a full disk, an interrupt by hand, no checkpoint),
nor after out of memory twice with no checkpoint between (the same point: a third try would repeat it).

Two parts share the decision, under the run's control lock:

- ``plan`` (once per ended attempt): decide, and record the decision in ``status.json``'s
  ``auto_resume``: ``{attempt, limit, count, history: [{attempt, kind, step, from_step, at, reason}],
  due_at, gave_up}`` (``from_step``: the checkpoint a resume starts from). ``sentence`` says it in a notification's words.
- ``resume_if_due`` (any time): the run resumes when its plan is due and it is still crashed or
  failed (a resume by hand, a restart or a delete in between wins).

The supervisor plans the moment its worker ends and waits out the back-off; a queue runner
plans and resumes its jobs' runs whose supervisor is gone (a power cut, a reboot). Each
automatic resume is an attempt like any (``attempt``, ``resumed_from``), counted in ``auto_resume``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.run.layout import RunDir
from core.run.reached import checkpoint_step, resume_by_hand, step_reached
from core.run.states import FAILED
from core.run.status import SUPERVISOR_MODULE, RunStatus, StatusFields, read_status, write_status
from core.run.store import load_run_config
from core.util.locks import held_briefly
from core.util.procs import module_running

QUEUED_DEFAULT = 2  # auto_resume when the config leaves it empty, for a run of a queue (others: 0)
# failure kinds (status.json's failure_kind, written by the worker and the supervisor)
NEVER = {
    "config": "its config is not valid, which a resume would not change",
    "diverged": "its training diverged (a NaN or infinite loss or reward), which a resume from the same checkpoint "
                "would repeat",
    "disk_full": "the disk is full; it resumes once there is space",
    "interrupted": "it was interrupted by hand",
    "no_checkpoint": "it has no checkpoint to resume from",
}
OUT_OF_MEMORY = ("gpu_oom", "host_oom", "killed")  # twice from the same checkpoint: it would come a third time
# a GPU driver reset (Windows' TDR, core.worker.gpu_reset) resumes like a crash: the checkpoint is whole and the
# next attempt may well run; "cuda", "env", "error": other errors, which may not come again
KINDS = (*NEVER, *OUT_OF_MEMORY, "gpu_reset", "cuda", "env", "error", "crashed")
HISTORY_KEPT = 20


@dataclass(frozen=True)
class Decision:
    """What happens after an ended attempt: ``due_at`` (a resume planned then) or ``gave_up`` (why not); both
    None when automatic resume is off for the run."""

    due_at: float | None = None
    gave_up: str | None = None
    count: int = 0  # automatic resumes so far, this one included when planned
    limit: int = 0
    from_step: int | None = None  # the newest checkpoint's step: where a resume starts (None: none, or not looked)

    @property
    def sentence(self) -> str:
        """The decision in a notification's words ("" when auto-resume is off)."""
        if self.due_at is not None:
            at = datetime.fromtimestamp(self.due_at).strftime("%H:%M:%S")
            start = f" from its checkpoint at step {self.from_step:,}" if self.from_step is not None else ""
            return f"it resumes by itself at {at}{start} (automatic resume {self.count} of {self.limit})"
        if self.gave_up:
            return f"it is not resumed automatically: {self.gave_up}"
        return ""


def _config(run_dir: Path) -> RunConfig | None:
    """The run's config, read once per decision; None when it cannot be read (a resume would fail the same way)."""
    try:
        return load_run_config(run_dir)
    except (ConfigError, OSError, ValueError):
        return None


def limit_for(cfg: RunConfig | None, status: RunStatus) -> int:
    """The run's ``runtime.auto_resume`` (empty: ``QUEUED_DEFAULT`` for a queued run, else 0); 0 without a config."""
    if cfg is None:
        return 0
    configured = cfg.runtime.auto_resume
    if configured is not None:
        return configured
    return QUEUED_DEFAULT if status.queue else 0


def failure_kind(status: RunStatus) -> str:
    """What ended the attempt: the kind its worker or supervisor recorded, else ``crashed`` (a death no one saw)."""
    kind = status.failure_kind
    return kind if kind in KINDS else "crashed"


def decide(run_dir: Path, status: RunStatus, now: float | None = None) -> Decision:
    """The decision for a crashed or failed run, from its status (pure but for reading the run's config and
    checkpoints, once each)."""
    now = time.time() if now is None else now
    cfg = _config(run_dir)
    limit = limit_for(cfg, status)
    auto = status.auto_resume or {}
    count = int(auto.get("count") or 0)
    if cfg is None or limit <= 0 or status.state not in FAILED:
        return Decision(limit=limit, count=count)
    kind = failure_kind(status)
    history = list(auto.get("history") or [])
    if kind in NEVER:
        return Decision(gave_up=NEVER[kind], count=count, limit=limit)
    from_step = checkpoint_step(run_dir)
    if kind in OUT_OF_MEMORY and from_step is not None and any(
            h.get("kind") in OUT_OF_MEMORY and h.get("from_step") == from_step for h in history):
        return Decision(gave_up=f"out of memory ({kind}) twice since the checkpoint at step {from_step:,}, which a "
                                "third try would repeat: lower the batch size, n_envs or the buffer", count=count,
                        limit=limit, from_step=from_step)
    if count >= limit:
        return Decision(gave_up=f"it was resumed automatically {count} time{'s' if count != 1 else ''} already "
                                f"(runtime.auto_resume: {limit})", count=count, limit=limit, from_step=from_step)
    if from_step is None and not cfg.is_baseline:
        return Decision(gave_up=NEVER["no_checkpoint"] + ": restart it", count=count, limit=limit)
    return Decision(due_at=now + cfg.runtime.auto_resume_after_s * 2 ** count, count=count + 1, limit=limit,
                    from_step=from_step)


def plan(run_dir: Path, now: float | None = None) -> Decision:
    """Decide for the attempt that just ended and record it in ``auto_resume`` (once per attempt: a second call for
    the same attempt returns what was recorded)."""
    run_dir = Path(run_dir)
    with held_briefly(RunDir(run_dir).control_lock, what=f"run {run_dir.name}"):
        status = read_status(run_dir)
        auto = dict(status.auto_resume or {})
        if auto.get("attempt") == status.attempt and status.state in FAILED:
            return Decision(due_at=auto.get("due_at"), gave_up=auto.get("gave_up"), count=int(auto.get("count") or 0),
                            limit=int(auto.get("limit") or 0), from_step=checkpoint_step(run_dir))
        decision = decide(run_dir, status, now)
        if decision.limit <= 0:
            if status.state in FAILED and status.attempt is not None:  # decided once: a queue runner asks every pass
                write_status(run_dir, auto_resume={**auto, "attempt": status.attempt, "limit": 0})
            return decision
        entry = {"attempt": status.attempt, "kind": failure_kind(status), "step": step_reached(run_dir),
                 "from_step": decision.from_step, "at": time.time(),
                 "reason": (status.exit_reason or status.error_message or status.state)[:300]}
        history = [*list(auto.get("history") or []), entry][-HISTORY_KEPT:]
        auto.update(attempt=status.attempt, limit=decision.limit, count=decision.count, history=history,
                    due_at=decision.due_at, gave_up=decision.gave_up)
        write_status(run_dir, auto_resume=auto)
        return decision


def next_step(run_dir: Path, decision: Decision | None) -> str:
    """What follows a crash, in its message's words: the automatic resume when one is planned; else why none is (when
    automatic resume is on) and the command that resumes it by hand. A crash message never says "it resumes" unless
    a resume is planned (issue 42: a run of its own, auto_resume 0, said it resumed from its checkpoint and stayed
    crashed). ``decision``: ``plan``'s for this attempt (None: it could not be made)."""
    if decision is not None and decision.due_at is not None:
        return decision.sentence
    by_hand = resume_by_hand(run_dir)
    if decision is None or not decision.gave_up:
        return by_hand
    if decision.gave_up.startswith(NEVER["no_checkpoint"]):  # by_hand says so too: once is enough
        return f"it is not resumed automatically: {by_hand}"
    return f"{decision.sentence}; {by_hand}"


class NoLongerDue(ValueError):
    """The planned resume was taken (or replaced) by someone else between the look and the lock."""


def resume_if_due(run_dir: Path, now: float | None = None, reap: bool = True) -> bool:
    """Resume the run when its planned automatic resume is due and it is still crashed or failed; True if it was.

    The plan is taken (``due_at`` cleared, ``resumed_at`` set) in the launch's first write, the one that makes the
    run ``starting``, under the run's control lock (``resume_run``'s ``claim``): a reader never sees the run crashed
    with nothing due while its resume starts (issue 44: a queue took that moment for the job's end), and of two
    callers (a supervisor and a queue runner) one resumes it. A resume refused for a reason of the run's own (no
    complete checkpoint left, a config that no longer reads) is recorded as given up, so nothing waits on it."""
    from core.launch.control import RunStateError, resume_run

    run_dir = Path(run_dir)
    now = time.time() if now is None else now
    if not _due(read_status(run_dir), now):
        return False

    def claim(locked: RunStatus) -> StatusFields:
        if not _due(locked, now):
            raise NoLongerDue
        return {"auto_resume": {**(locked.auto_resume or {}), "due_at": None, "resumed_at": time.time()}}

    try:
        resume_run(run_dir, reap=reap, claim=claim)
    except NoLongerDue:
        return False  # resumed, restarted or deleted by someone else meanwhile
    except RunStateError as exc:
        _give_up(run_dir, now, f"the automatic resume was refused: {exc}")
        return False
    return True


def _due(status: RunStatus, now: float) -> bool:
    """The attempt's planned resume is due: it is crashed or failed and its plan (for this attempt) says so."""
    auto = status.auto_resume or {}
    due = auto.get("due_at")
    return due is not None and now >= due and status.state in FAILED and auto.get("attempt") == status.attempt


def _give_up(run_dir: Path, now: float, why: str) -> None:
    """Record that the planned resume will not happen (it stays as it was when someone else took it meanwhile)."""
    with held_briefly(RunDir(run_dir).control_lock, what=f"run {run_dir.name}"):
        status = read_status(run_dir)
        if _due(status, now):
            write_status(run_dir, auto_resume={**(status.auto_resume or {}), "due_at": None, "gave_up": why[:300]})


def pending(status: RunStatus) -> float | None:
    """When a crashed or failed run will resume by itself (None: it will not)."""
    due = (status.auto_resume or {}).get("due_at")
    return float(due) if due is not None and status.state in FAILED else None


def decided(status: RunStatus) -> bool:
    """Whether the automatic resume of a crashed or failed run's attempt is decided (``plan`` ran for it); True for
    a run that did not fail. Until then nobody can say the run has ended: its supervisor (or a queue runner, when the
    supervisor is gone) is about to decide, and may plan a resume."""
    return status.state not in FAILED or (status.auto_resume or {}).get("attempt") == status.attempt


def awaited(run_dir: Path, status: RunStatus) -> str | None:
    """Why a crashed or failed run is not over yet, in words: the resume planned for it (``it resumes by itself at
    ...``), or its supervisor still deciding; None when it has ended (nothing will resume it)."""
    due = pending(status)
    if due is not None:
        auto = status.auto_resume or {}
        return Decision(due_at=due, count=int(auto.get("count") or 0), limit=int(auto.get("limit") or 0),
                        from_step=checkpoint_step(run_dir)).sentence
    if not decided(status) and module_running(SUPERVISOR_MODULE, run_dir):
        return "its supervisor is deciding whether it resumes by itself"
    return None
