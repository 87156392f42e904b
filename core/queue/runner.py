"""The queue runner process: ``python -m core.queue.runner RUNS_DIR``.

Detached like a worker. Each pass (about once a second): bring job states up to date from
their run folders, honour CANCEL, and start ready jobs while slots are free and their estimates
fit next to the running ones (``core.launch.start.start_run``, as the window and ``rlpanel train``).
A job's run folder is created and recorded in the state before its worker starts, so a runner
restarted after a crash adopts it instead of launching it again. A waiting job that already has a run (a stopped
job of a continued queue, ``core.queue.control``) resumes that run from its checkpoint instead.
A queue with a Ray cluster (``ray`` in its state) submits each job there (``launch_worker`` does,
from the run's status) and asks Ray each pass which node runs it and whether its job ended unseen.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from core.cluster.jobs import settle_cluster_run
from core.config.errors import ConfigError
from core.launch import auto_resume
from core.launch.control import ClusterLaunchError, RunStateError, launch_worker, request_stop, resume_run
from core.launch.start import StartError, start_run
from core.notify.run_events import notify_queue_end, notify_run_event
from core.queue.autostart import drop_entry
from core.queue.record import LAUNCHING, RUNNING, WAITING, QueueJob, QueueState
from core.queue.state import (
    JOB_ENDED,
    QueueFolder,
    fits_next_to,
    job_config,
    job_estimate,
    load_queue,
    plan_job,
    ready_jobs,
    reconcile,
    summary_line,
    write_queue,
)
from core.run.states import FAILED, LIVE
from core.run.status import SUPERVISOR_MODULE, StatusFields, read_status
from core.run.store import RunStore
from core.util.files import AtomicWriteError
from core.util.locks import LockBusy
from core.util.procs import module_running, process_identity


def adopt_orphans(runs_dir: Path, state: QueueState) -> None:
    """A job caught between creating its run and recording it: find the run by its queue tag."""
    for job in state.jobs:
        if job.status == LAUNCHING and not job.run_id:
            for info in RunStore(runs_dir).list():
                tag = info.status.queue or {}
                if tag.get("id") == state.id and tag.get("job") == job.name:
                    job.run_id = info.id
            if not job.run_id:
                job.status = WAITING  # its run was never created: launch it normally


def launch_job(runs_dir: Path, state: QueueState, job: QueueJob) -> None:
    if job.run_id:  # a stopped job of a continued queue (core.queue.control._continue): its run goes on
        resume_job(runs_dir, state, job)
        return
    spec = plan_job(state, job.name)
    cfg = job_config(state, job)
    job.status, job.started_at, job.reason = LAUNCHING, time.time(), None
    if not save_state(runs_dir, state):  # LAUNCHING must be on disk before the run folder exists: next pass
        job.status, job.started_at = WAITING, None
        return
    tags: StatusFields = {"queue": {"id": state.id, "job": job.name}}
    if state.ray:
        tags["ray"] = state.ray  # launch_worker submits it to that cluster
    if job.group is not None:
        tags["group"] = job.group  # one seed of a group: its runs are told apart from the others' by it

    def record(run: Path) -> None:
        # the run id on disk before the worker starts; if that write fails, a restarted runner still
        # finds the run by its queue tag (adopt_orphans)
        job.run_id = run.name
        save_state(runs_dir, state)

    start_run(RunStore(runs_dir), cfg, spec.preset, extra_status=tags, on_created=record, check_env=False,
              id_suffix="" if job.seed is None else f"s{job.seed}")


def resume_job(runs_dir: Path, state: QueueState, job: QueueJob) -> None:
    """Resume a waiting job's own run from its newest checkpoint, as ``rlpanel resume`` does, to its configured total.

    Raises ``RunStateError`` when the run cannot be resumed (the job fails with the reason), unless it runs already
    (resumed by hand since the queue was continued): then the job follows it.
    """
    run_dir = runs_dir / str(job.run_id)
    job.status, job.started_at = LAUNCHING, time.time()
    if not save_state(runs_dir, state):
        job.status, job.started_at = WAITING, None
        return
    try:
        resume_run(run_dir, reap=True)
    except RunStateError:
        if read_status(run_dir).state not in LIVE:
            raise
        return  # launched: reconcile follows the run as it is
    job.reason = None


def save_state(runs_dir: Path, state: QueueState) -> bool:
    """Write the queue state; a write Windows refused past the retry bound is said and retried next pass.

    The state lives in this process: a failed write never fails the queue.
    """
    try:
        write_queue(runs_dir, state)
        return True
    except AtomicWriteError as exc:
        print(f"queue runner: warning: {exc}; trying again next pass", file=sys.stderr, flush=True)
        return False


def step(runs_dir: Path, state: QueueState, estimates: dict[str, dict[str, Any]]) -> bool:
    """One scheduling pass; returns False when the plan is over."""
    before = {j.name: j.status for j in state.jobs}
    if state.ray:
        _follow_cluster_jobs(runs_dir, state)
    cancel = QueueFolder(runs_dir).cancel_request
    if not cancel.exists():
        _auto_resume(runs_dir, state)
    reconcile(runs_dir, state)
    _notify_unattended_crashes(runs_dir, state, before)
    _start_recorded_runs(runs_dir, state)
    if _stop_launching(runs_dir, state, cancel):
        state.state = "cancelling" if cancel.exists() else state.state
    else:
        _launch_ready(runs_dir, state, estimates)
    over = all(j.status in JOB_ENDED for j in state.jobs)
    if over:
        state.state = _final_state(state, cancelled=cancel.exists())
        state.ended_at = time.time()
    return not (save_state(runs_dir, state) and over)  # the plan is over once that is on disk


def _follow_cluster_jobs(runs_dir: Path, state: QueueState) -> None:
    """Ask Ray about each launched job: the node it runs on, and a job that ended without its run saying so."""
    for job in state.jobs:
        if job.launched and job.run_id:
            view = settle_cluster_run(runs_dir / job.run_id)
            if view is not None and view.node:
                job.node = view.node
            if view is not None and view.crashed:
                notify_run_event(runs_dir / job.run_id, "crashed", view.crashed, log=_log)


def _auto_resume(runs_dir: Path, state: QueueState) -> None:
    """Crashed or failed runs of launched jobs whose supervisor is gone (a power cut, a reboot, a killed process
    group) are planned here (``core.launch.auto_resume``: the supervisor plans its own) and resumed when due."""
    for job in state.jobs:
        if not (job.launched and job.run_id):
            continue
        run_dir = runs_dir / job.run_id
        status = read_status(run_dir)
        decided = auto_resume.decided(status)
        if status.state not in FAILED or (decided and auto_resume.pending(status) is None):
            continue  # running, or decided with nothing due (given up, off): no process scan every pass
        if module_running(SUPERVISOR_MODULE, run_dir):
            continue  # its supervisor plans and resumes it (the job stays running until it has: reconcile)
        try:
            if not decided:
                decision = auto_resume.plan(run_dir)
                if decision.due_at is not None:  # its supervisor could not say it: the notification goes from here
                    why = status.error_message or status.exit_reason or "the worker ended without a word"
                    notify_run_event(run_dir, status.state, f"{why}; {decision.sentence}", log=_log)
            if auto_resume.resume_if_due(run_dir, reap=True):
                _log(f"job {job.name}: run {job.run_id} resumed automatically")
        except (LockBusy, OSError) as exc:  # the job waits (reconcile keeps it running): tried again next pass
            _log(f"job {job.name}: the automatic resume of run {job.run_id} waits: {exc}")


def _notify_unattended_crashes(runs_dir: Path, state: QueueState, before: dict[str, str]) -> None:
    """A job that just read as crashed with no supervisor left to say so (it died with the worker:
    its process group was killed) is notified from here, once; a live supervisor says it itself."""
    for job in state.jobs:
        run_id = job.run_id
        if job.status != "crashed" or before.get(job.name) == "crashed" or not run_id:
            continue
        run_dir = runs_dir / run_id
        status = read_status(run_dir)
        if status.recorded_state is not None and not module_running(SUPERVISOR_MODULE, run_dir):
            reason = (f"{status.error_message or 'the worker ended without a word'} "
                      "(its supervisor ended too, so the queue runner reports it)")
            gave_up = (status.auto_resume or {}).get("gave_up")
            if gave_up and (status.auto_resume or {}).get("attempt") == status.attempt:
                reason += f"; it is not resumed automatically: {gave_up}"
            notify_run_event(run_dir, "crashed", reason, log=_log)


def _start_recorded_runs(runs_dir: Path, state: QueueState) -> None:
    """A recorded run whose worker never started (the runner died in between) starts now."""
    for job in state.jobs:
        if job.status == LAUNCHING and job.run_id:
            if read_status(runs_dir / job.run_id).state == "queued":
                try:
                    launch_worker(runs_dir / job.run_id)
                except ClusterLaunchError as exc:  # the run says failed with the reason: reconcile takes it
                    _log(f"job {job.name}: {exc}")


def _stop_launching(runs_dir: Path, state: QueueState, cancel: Path) -> bool:
    """Settle the waiting jobs of a cancelled queue (or one that stops on failure); True if so."""
    failed = any(j.status in FAILED for j in state.jobs)
    if not (cancel.exists() or (failed and state.on_failure == "stop")):
        return False
    why = "cancelled" if cancel.exists() else "skipped"
    reason = "the queue was cancelled" if cancel.exists() else "an earlier job failed (on_failure: stop)"
    for job in state.jobs:
        if job.status == WAITING:
            job.status, job.reason = why, reason
    if cancel.exists() and cancel.read_text(encoding="utf-8").strip() == "stop-running":
        for job in state.jobs:
            if job.launched and job.run_id:
                request_stop(runs_dir / job.run_id, "queue cancelled")
    return True


def _launch_ready(runs_dir: Path, state: QueueState, estimates: dict[str, dict[str, Any]]) -> None:
    """Start ready jobs in plan order while slots are free and each fits next to the running ones."""
    active = [j for j in state.jobs if j.status in (LAUNCHING, RUNNING)]
    for job in ready_jobs(state):
        if len(active) >= state.parallel:
            return
        mine = _estimate(state, job, estimates)
        if mine is None:
            continue
        others = [estimates.get(j.plan_name) or {} for j in active]
        if "error" not in mine and all("error" not in e and e for e in others):
            ok, why = fits_next_to(mine, others)
            if not ok:
                job.reason = why
                return  # keep the plan's order: later jobs wait behind this one
        try:
            launch_job(runs_dir, state, job)
        except (ConfigError, StartError, ClusterLaunchError, RunStateError) as exc:
            job.status, job.reason, job.ended_at = "failed", str(exc), time.time()
            continue
        active.append(job)


def _estimate(state: QueueState, job: QueueJob, estimates: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The job's fit estimate (computed once per plan job: its seeds share it); None when its config is invalid
    (the job failed)."""
    if job.plan_name not in estimates:
        try:
            estimates[job.plan_name] = job_estimate(job_config(state, job)) or {}
        except ConfigError as exc:
            job.status, job.reason, job.ended_at = "failed", str(exc), time.time()
            return None
    return estimates[job.plan_name]


def _final_state(state: QueueState, cancelled: bool) -> str:
    if cancelled:
        return "cancelled"
    if any(j.status in ("failed", "crashed", "skipped") for j in state.jobs):
        return "finished with failures"
    return "finished"


def run(runs_dir: Path, poll_s: float = 1.0) -> int:
    lock = QueueFolder(runs_dir).lock()
    try:
        lock.acquire()
    except RuntimeError as exc:
        print(f"queue runner: {exc}", file=sys.stderr)
        return 2
    try:
        state = load_queue(runs_dir)
        if state is None:
            print("queue runner: no queue state; start one with: rlpanel queue run PLAN", file=sys.stderr)
            return 2
        state.runner = process_identity()
        state.restarts = (state.restarts if state.restarts is not None else -1) + 1
        adopt_orphans(runs_dir, state)
        print(f"queue runner: pid {state.runner['pid']} for queue {state.id} ({summary_line(state)})", flush=True)
        estimates: dict[str, dict[str, Any]] = {}
        while step(runs_dir, state, estimates):
            time.sleep(poll_s)
        print(f"queue runner: {state.state} ({summary_line(state)})", flush=True)
        drop_entry(runs_dir, state, _log)  # the queue ended: nothing to resume after a restart
        notify_queue_end(state.to_json(), log=_log)
        return 0
    except Exception:  # noqa: BLE001 - the state must say why the runner ended
        traceback.print_exc()
        stored = load_queue(runs_dir)
        if stored is not None:
            stored.state = "failed"
            stored.error = traceback.format_exc().strip().splitlines()[-1]
            write_queue(runs_dir, stored)
            drop_entry(runs_dir, stored, _log)
            notify_queue_end(stored.to_json(), log=_log)
        return 1
    finally:
        lock.release()


def _log(line: str) -> None:
    print(f"queue runner: {line}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.queue.runner")
    parser.add_argument("runs_dir", type=Path)
    parser.add_argument("--poll", type=float, default=1.0)
    args = parser.parse_args(argv)
    return run(args.runs_dir.resolve(), args.poll)


if __name__ == "__main__":
    sys.exit(main())
