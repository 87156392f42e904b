"""The queue's state: ``<runs>/.queue/state.json`` (atomic replace), and the scheduling rules.

Every job records its run id before its worker starts, so a runner restarted after a crash
adopts a launched job instead of launching it twice. ``read_queue`` reads the queue as a user
sees it: ``crashed`` when the runner is gone (a reading, never written); the runner and
``start_queue`` work on ``load_queue``, the state as stored.

A plan job with seeds becomes one queue job per seed when the state is made (``new_state``): ``<job>#seed<s>``,
carrying its seed and its group (id ``<queue id>-<job>-x<N>``), so each seed is scheduled, launched, adopted,
reconciled and run again like any job, and the runs of one job form one group.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.seeds import with_seed
from core.estimate.estimate import estimate_config
from core.launch import auto_resume
from core.launch.runner_folder import RunnerFolder
from core.queue.plan import Plan, PlanJob
from core.queue.record import LAUNCHING, RUNNING, WAITING, QueueJob, QueueState
from core.run.states import FAILED, LIVE, TERMINAL
from core.run.status import SUPERVISOR_MODULE, read_status, stall_note
from core.util.procs import module_running

__all__ = ["LAUNCHING", "RUNNING", "WAITING", "QueueJob", "QueueState"]  # re-exported: the statuses' usual home
JOB_ENDED = ("finished", "stopped", "failed", "crashed", "skipped", "cancelled")
QUEUE_ACTIVE = ("running", "cancelling")


class QueueFolder(RunnerFolder):
    """Every file of ``<runs>/.queue`` in one place (the state, the log and the locks: ``RunnerFolder``)."""

    __slots__ = ()

    def __init__(self, runs_dir: Path | str):
        super().__init__(runs_dir, ".queue")

    @property
    def cancel_request(self) -> Path:
        """``CANCEL``: stop launching (its text ``stop-running`` also stops the running jobs)."""
        return self.path / "CANCEL"

    @property
    def plan(self) -> Path:
        """Where a plan started from the window is written."""
        return self.path / "plan.yaml"


def new_state(plan: Plan, plan_path: str) -> QueueState:
    queue_id = time.strftime("%Y%m%d-%H%M%S")
    return QueueState(id=queue_id, plan=plan.model_dump(mode="json"), state="running",
                      jobs=[q for j in plan.jobs for q in queue_jobs(queue_id, j)], plan_path=plan_path,
                      created_at=time.time())


def queue_jobs(queue_id: str, job: PlanJob) -> list[QueueJob]:
    """The queue's jobs for plan job ``job``: itself, or one per seed of its group."""
    seeds = job.seed_list()
    if seeds is None:
        return [QueueJob(job.name)]
    group_id = f"{queue_id}-{job.name}-x{len(seeds)}"
    return [QueueJob(f"{job.name}#seed{seed}", base=job.name, seed=seed,
                     group={"id": group_id, "seed": seed, "size": len(seeds), "name": job.name}) for seed in seeds]


def load_queue(runs_dir: Path) -> QueueState | None:
    """The queue's state as stored (None when this runs folder never ran a queue)."""
    stored = QueueFolder(runs_dir).load_state()
    return QueueState.from_json(stored) if stored is not None else None


def read_queue(runs_dir: Path) -> QueueState | None:
    """The queue's state as a reader sees it: ``state`` reads ``crashed`` when its runner is gone."""
    data = QueueFolder(runs_dir).read_state(QUEUE_ACTIVE)
    return QueueState.from_json(data) if data is not None else None


def write_queue(runs_dir: Path, state: QueueState) -> None:
    """Write the state (its ``updated_at`` set now); a reading's ``recorded_state`` is never written."""
    data = state.to_json()
    data.pop("recorded_state", None)
    QueueFolder(runs_dir).write_state(data)
    state.updated_at = data["updated_at"]


def is_active(state: QueueState | None) -> bool:
    return state is not None and state.state in QUEUE_ACTIVE


# --- scheduling (one pass; the runner calls it about once a second) -----------------------------

def reconcile(runs_dir: Path, state: QueueState) -> None:
    """Bring each launched job's status up to date from its run folder.

    A crashed or failed run is not the job's end while its automatic resume is due or still being decided (its
    supervisor plans it the moment the worker ends, or the runner when the supervisor is gone): a job ``after`` it
    must not start meanwhile (issue 44). A job that ended failed or crashed follows its run again when the run
    lives again (resumed by hand, or by a resume planned late), so the queue's record says how its runs ended.
    """
    for job in state.jobs:
        if not job.run_id or not (job.launched or job.status in FAILED):
            continue
        run_status = read_status(Path(runs_dir) / job.run_id)
        run_state = run_status.state
        due = auto_resume.pending(run_status)
        if not job.launched:
            if due is None and run_state not in LIVE:
                continue  # still as it ended
            job.ended_at = None
        when = time.strftime('%H:%M', time.localtime(run_status.ended_at or time.time()))
        if due is not None:  # it resumes by itself: the job is not over
            job.status = RUNNING
            job.reason = f"{run_state} at {when}; resumes by itself at {time.strftime('%H:%M:%S', time.localtime(due))}"
        elif not auto_resume.decided(run_status) and module_running(SUPERVISOR_MODULE, Path(runs_dir) / job.run_id):
            # its supervisor plans it once its worker is gone; without one, the runner's pass planned it before this
            # (_auto_resume), except in a cancelled queue, where nothing will: then the job ends as its run did
            job.status = RUNNING
            job.reason = f"{run_state} at {when}; deciding whether it resumes by itself"
        elif run_state in TERMINAL:
            job.status = run_state
            job.ended_at = job.ended_at or time.time()
            if run_state != "finished":
                job.reason = run_status.error_message or run_state
        elif run_state in LIVE:
            job.status = RUNNING
            note = stall_note(run_status)
            job.reason = f"stalled: {note}" if note else None


def ready_jobs(state: QueueState) -> list[QueueJob]:
    """Waiting jobs whose ``after`` jobs have all ended (every seed of a job with seeds), in plan order."""
    return [j for j in state.jobs if j.status == WAITING and not pending_after(state, j.name)]


def pending_after(state: QueueState, name: str) -> list[str]:
    """The plan jobs job ``name`` still waits for: one of theirs (a seed) has not ended."""
    ended: dict[str, bool] = {}
    for job in state.jobs:
        ended[job.plan_name] = ended.get(job.plan_name, True) and job.status in JOB_ENDED
    return [dep for dep in state.after(name) if not ended.get(dep, False)]


def fits_next_to(candidate: dict[str, Any], running: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether a job's estimate fits beside the running jobs' estimates (GPU and host RAM) on this machine:
    an estimate planned for another machine's card is judged by its ``this_machine`` part."""
    if not running:
        return True, ""
    candidate = candidate.get("this_machine") or candidate
    running = [e.get("this_machine") or e for e in running]
    gpu = sum(e["gpu_bytes"] for e in running) + candidate["gpu_bytes"]
    host = sum(e["host_bytes"] for e in running) + candidate["host_bytes"]
    if candidate["on_gpu"] and gpu > 0.95 * candidate["capacity_bytes"]:
        return False, (f"waiting: would not fit next to the running jobs on {candidate['gpu_name']} "
                       f"({gpu / 2**20:,.0f} of {candidate['capacity_bytes'] / 2**20:,.0f} MiB)")
    if host > 0.95 * candidate["host_capacity_bytes"]:
        return False, (f"waiting: would not fit next to the running jobs in host RAM "
                       f"({host / 2**20:,.0f} of {candidate['host_capacity_bytes'] / 2**20:,.0f} MiB)")
    return True, ""


def job_estimate(cfg: RunConfig) -> dict[str, Any] | None:
    try:
        return estimate_config(cfg).to_json()
    except (ConfigError, OSError) as exc:  # an estimate is advice; the worker decides
        return {"error": str(exc)}


def plan_job(state: QueueState, name: str) -> PlanJob:
    return PlanJob.model_validate(state.plan_entry(name))


def job_config(state: QueueState, job: QueueJob) -> RunConfig:
    """The run config job ``job`` launches: its plan job's, with its seed, and a custom env's import folder (the
    folder the queue was started in, as ``rlpanel train`` records the folder it runs in) unless it names one."""
    cfg = plan_job(state, job.name).config()
    cfg = cfg if job.seed is None else with_seed(cfg, job.seed)
    return cfg.with_import_folder(state.import_folder) if state.import_folder else cfg


def summary_line(state: QueueState) -> str:
    counts: dict[str, int] = {}
    for job in state.jobs:
        counts[job.status] = counts.get(job.status, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in counts.items())
