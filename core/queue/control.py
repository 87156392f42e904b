"""Start, continue and cancel a queue; the runner itself is a detached process (``core.queue.runner``)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from core.queue.autostart import Host, register, remove
from core.queue.plan import Plan, save_plan
from core.queue.record import WAITING, QueueJob, QueueState
from core.queue.state import QueueFolder, is_active, load_queue, new_state, read_queue, summary_line, write_queue
from core.run.checkpoints import find_checkpoint
from core.run.status import read_status
from core.util.locks import LockBusy, held_briefly
from core.util.paths import absolute

RUNNER_MODULE = "core.queue.runner"
# a queue in one of these states, started again with the same plan, continues: finished jobs stay
CONTINUABLE = ("crashed", "failed", "cancelled", "finished with failures")
# job states a continued queue runs again. "stopped" is there for `queue cancel --stop-running` (issue 42): the README
# promises that a rerun after a cancel runs the unfinished jobs, and a job stopped by the cancel is one. A stopped job
# whose run has a complete checkpoint resumes that run (the same curve, the steps it trained kept), as a stopped
# run resumes anywhere else; the others start a new run.
RUN_AGAIN = ("failed", "crashed", "skipped", "cancelled", "stopped")


def jobs_to_run(state: QueueState) -> list[str]:
    """The jobs that ``rlpanel queue run`` of the same plan would run (after a failure or a cancel)."""
    if state.state == "crashed":  # the runner died: everything not ended goes on
        return [j.name for j in state.jobs if j.status not in ("finished", *RUN_AGAIN)]
    return [j.name for j in state.jobs if j.status in RUN_AGAIN or j.status == WAITING]


def resume_step(runs_dir: Path, job: QueueJob) -> int | None:
    """The checkpoint step a stopped job's own run resumes from when its queue continues (None: it starts anew)."""
    if job.status != "stopped" or not job.run_id:
        return None
    run_dir = Path(runs_dir) / job.run_id
    if read_status(run_dir).state != "stopped":
        return None  # resumed, restarted or deleted by hand since: the queue does not touch it
    ckpt = find_checkpoint(run_dir).checkpoint
    return ckpt.step if ckpt is not None else None


def _continue(root: Path, stored: QueueState) -> QueueState:
    """A failed or cancelled queue set to run its unfinished jobs again; finished jobs never run twice. A stopped
    job with a checkpoint keeps its run, which the runner resumes (``core.queue.runner.launch_job``)."""
    for job in stored.jobs:
        if job.status in RUN_AGAIN:
            step = resume_step(root, job)
            reason = None if step is None else f"resumes its run from the checkpoint at step {step:,}"
            run_id = None if step is None else job.run_id
            job.status, job.run_id, job.reason, job.started_at, job.ended_at = WAITING, run_id, reason, None, None
    stored.state, stored.ended_at, stored.error = "running", None, None
    return stored


def _again(state: QueueState) -> str:
    """``a, b (resumes its run from the checkpoint at step 1,024)``: the jobs a continued queue runs."""
    jobs = [j for j in state.jobs if j.status == WAITING]
    return ", ".join(f"{j.name} ({j.reason})" if j.run_id else j.name for j in jobs) or "nothing"


class QueueBusy(RuntimeError):
    """A queue is still running in this runs folder: one at a time."""


def request_cancel(runs_dir: Path, stop_running: bool = False) -> None:
    folder = QueueFolder(runs_dir)
    folder.path.mkdir(parents=True, exist_ok=True)
    folder.cancel_request.write_text("stop-running\n" if stop_running else "\n")


def start_queue(runs_dir: Path, plan: Plan, plan_path: Path | None = None, restart: bool = False,
                reap: bool = False, cluster: dict[str, Any] | None = None, survive_reboot: bool = False,
                host: Host | None = None, import_folder: str | None = None) -> tuple[QueueState, str]:
    """Start ``plan`` in ``runs_dir`` with a detached runner; returns (state, what happened).

    The same plan after its runner crashed continues where it was; after it failed or was
    cancelled, its failed, crashed, skipped, cancelled and stopped jobs run again (a stopped one with a
    checkpoint resumes its run from it) and finished ones never do (unless ``restart``). Without a
    ``plan_path`` the plan is written to ``<runs>/.queue/plan.yaml``. ``reap`` waits for the
    runner from a thread of this process (for a long-lived caller such as the window).
    ``cluster`` (``core.cluster.target.ClusterTarget.to_json()``) sends every job to that Ray
    cluster; a continued queue keeps the cluster it had unless another is given.
    ``survive_reboot`` registers a start-up entry that resumes the queue when the user logs in after a
    restart (``core.queue.autostart``; ``host``: the platform it is made for); a continued queue keeps the
    entry it had. ``import_folder``: where the jobs' custom envs are imported from (``rlpanel queue run`` and the
    window pass the folder they were started in, as for ``train``; each start of the plan says it anew, a
    ``queue resume`` keeps it). Raises ``QueueBusy`` while another queue runs here, ``AutostartError`` (nothing started)
    when no entry can be made.
    """
    root = absolute(runs_dir)
    try:
        with held_briefly(QueueFolder(root).start_lock, what=f"the queue of {root}"):
            state_host = (host or Host()) if survive_reboot else None
            return _start_locked(root, plan, plan_path, restart, reap, cluster, state_host, import_folder)
    except LockBusy as exc:
        raise QueueBusy(str(exc)) from None


def _start_locked(root: Path, plan: Plan, plan_path: Path | None, restart: bool, reap: bool,
                  cluster: dict[str, Any] | None, entry_host: Host | None,
                  import_folder: str | None = None) -> tuple[QueueState, str]:
    """``start_queue`` once its start lock is held: a second start waits here and then finds this
    queue active (its state is written before the lock is let go) and is refused. ``entry_host``: make a
    start-up entry for that platform (None: keep the one the state has, if any)."""
    current = read_queue(root)
    same = current is not None and current.plan == plan.model_dump(mode="json")
    if current is not None and is_active(current):
        raise QueueBusy(f"queue {current.id} is already running in {root} ({summary_line(current)}); this plan was "
                        "not started: wait for that queue, cancel it, or use another --runs-dir")
    stored = load_queue(root)
    state: QueueState
    if current and current.state == "crashed" and same and not restart and stored:
        note = f"continuing queue {current.id} where its runner stopped ({summary_line(current)})"
        state = stored  # as its runner left it
    elif current and current.state in CONTINUABLE and same and not restart and stored:
        QueueFolder(root).cancel_request.unlink(missing_ok=True)
        state = _continue(root, stored)
        note = (f"continuing queue {current.id} ({current.state}): running {_again(state)} "
                f"again; finished jobs are kept ({summary_line(state)})")
    else:
        folder = QueueFolder(root)
        if plan_path is None:
            plan_path = folder.plan
            save_plan(plan, plan_path)
        folder.cancel_request.unlink(missing_ok=True)
        state = new_state(plan, str(Path(plan_path).resolve()))
        runs = f" ({len(state.jobs)} runs: jobs with seeds run one per seed)" if len(state.jobs) != len(plan.jobs) else ""
        note = f"started queue with {len(plan.jobs)} jobs{runs}, {plan.parallel} at once"
    if cluster is not None:
        state.ray = cluster
    if import_folder is not None:
        state.import_folder = import_folder
    if state.ray:
        note += f"; jobs go to the Ray cluster at {state.ray['address']}"
    if entry_host is not None:
        state.survive_reboot = register(root, state.id, entry_host)  # before anything starts: a refusal starts nothing
    if state.survive_reboot is not None:
        note += f"; resumes after a restart: {state.survive_reboot.describe()}"
    state.launched_at = time.time()
    state.runner = None  # the runner fills it in once it holds the queue's lock
    write_queue(root, state)
    launch_queue_runner(root, reap=reap)
    return read_queue(root) or state, note


def resume_queue(runs_dir: Path, host: Host | None = None) -> tuple[QueueState | None, str]:
    """``rlpanel queue resume``: start the runner of a queue whose runner died (a restart), with its stored state.

    Its launched jobs are adopted, its waiting ones go on, finished ones never run twice. A queue whose runner
    lives is left alone; a queue that has ended (or none) has its start-up entry removed. Idempotent: the
    start-up entry may run it while the user runs it too. Returns (the state, what happened).
    """
    root = absolute(runs_dir)
    try:
        with held_briefly(QueueFolder(root).start_lock, what=f"the queue of {root}"):
            return _resume_locked(root, host)
    except LockBusy:
        return read_queue(root), f"the queue of {root} is being started by another command: nothing to do here"


def _resume_locked(root: Path, host: Host | None) -> tuple[QueueState | None, str]:
    current, stored = read_queue(root), load_queue(root)
    if current is not None and stored is not None and is_active(current):
        return current, (f"queue {current.id} is running (its runner lives): nothing to resume; "
                         "its start-up entry stays until it ends")
    if current is not None and stored is not None and current.state == "crashed":
        stored.launched_at, stored.runner = time.time(), None  # the runner fills it in once it holds the lock
        write_queue(root, stored)
        launch_queue_runner(root, reap=False)
        return stored, f"resumed queue {stored.id}: its runner was gone; unfinished jobs go on ({summary_line(stored)})"
    note = f"queue {current.id} has ended ({current.state})" if current else f"no queue in {root}"
    note += ": nothing to resume"
    removed = remove(root, host)
    if stored is not None and stored.survive_reboot is not None:
        stored.survive_reboot = None
        write_queue(root, stored)
    return current, note + (f"; removed the start-up entry ({', '.join(removed)})" if removed else "")


def launch_queue_runner(runs_dir: Path, reap: bool = True) -> subprocess.Popen[bytes]:
    """Start the queue runner for ``runs_dir`` detached; its output goes to ``.queue/runner.log``."""
    folder = QueueFolder(runs_dir)
    return folder.launch_runner(RUNNER_MODULE, str(folder.runs_dir), reap=reap)


def cancel_queue(runs_dir: Path, stop_running: bool = False) -> QueueState:
    """Stop launching jobs (and, with ``stop_running``, ask running ones to stop); returns the state.

    A crashed queue has no runner to tell, so its waiting jobs are settled here.
    Raises ``LookupError`` when there is nothing to cancel.
    """
    state = read_queue(runs_dir)
    if state is None or state.state not in ("running", "cancelling", "crashed"):
        raise LookupError("no running queue to cancel")
    if state.state == "crashed":
        state = load_queue(runs_dir) or state  # as stored: "crashed" is only how it reads
        for job in state.jobs:
            if job.status == WAITING:
                job.status, job.reason = "cancelled", "the queue was cancelled"
        state.state = "cancelled"
        write_queue(runs_dir, state)
    else:
        request_cancel(runs_dir, stop_running)
    return state
