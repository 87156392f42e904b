"""Issue 43: a queued run whose worker wrote ``failed`` is not an ended job while its supervisor still lives to plan
the automatic resume (the worker process takes a moment to end after its last write; the plan comes after)."""

from __future__ import annotations

import subprocess
import sys

from core.queue.record import QueueJob, QueueState
from core.queue.state import reconcile
from core.run.status import SUPERVISOR_MODULE, write_status
from tests.app.fake_runs import make_fake_run


def queue_of(run) -> QueueState:
    return QueueState(id="q", plan={}, state="running", jobs=[QueueJob(name="reset", status="running", run_id=run.name)])


def test_a_failed_run_whose_supervisor_has_not_decided_yet_keeps_its_job_running(runs_dir):
    run = make_fake_run(runs_dir, state="failed", attempt=1, failure_kind="gpu_reset", queue={"id": "q", "job": "reset"},
                        error={"message": "GPU driver reset: CUDA error: unspecified launch failure"})
    # a process that reads, to a process scan, as the run's supervisor still settling its worker's end
    supervisor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-m", SUPERVISOR_MODULE,
                                   str(run)])
    try:
        state = queue_of(run)
        reconcile(runs_dir, state)
        assert state.jobs[0].status == "running" and "deciding whether it resumes by itself" in state.jobs[0].reason
        write_status(run, auto_resume={"attempt": 1, "limit": 2, "count": 1, "due_at": 4e9, "history": []})
        reconcile(runs_dir, state)  # decided: it resumes by itself, so the job goes on
        assert state.jobs[0].status == "running" and "resumes by itself at" in state.jobs[0].reason
        write_status(run, auto_resume={"attempt": 1, "limit": 2, "count": 2, "due_at": None, "gave_up": "twice"})
        reconcile(runs_dir, state)  # decided: given up, so the job has ended
        assert state.jobs[0].status == "failed" and state.jobs[0].reason.startswith("GPU driver reset")
    finally:
        supervisor.kill()
        supervisor.wait()


def test_a_failed_run_with_no_supervisor_left_ends_its_job(runs_dir):
    run = make_fake_run(runs_dir, state="failed", attempt=1, failure_kind="config", error={"message": "bad config"})
    state = queue_of(run)
    reconcile(runs_dir, state)
    assert state.jobs[0].status == "failed" and state.jobs[0].reason == "bad config"
