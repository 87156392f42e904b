"""The fault suite's queues resuming (issue 44): a queue with automatic resume and an ``after`` job, whose first run's
worker is killed (kill -9) while its supervisor is held still (SIGSTOP, a loaded laptop's slow supervisor) so the
queue runner sees the run dead before anyone has decided whether it resumes. The dependent job never starts while the
first is due to resume, the queue ends ``finished``, and its record matches its runs' states."""

from __future__ import annotations

import os
import signal
import time

import psutil
import pytest
import yaml

from core.queue.state import read_queue
from core.run.status import SUPERVISOR_MODULE, read_status
from tests.core.queue.test_queue import plan_over
from tests.faults.conftest import TALLY
from tests.training_helpers import cli, last_step, wait_for

ENV = "tests.core.night.night_env:NightEnv"
FIRST = {"ppo.n_steps": 64, "ppo.batch_size": 64, "ppo.n_epochs": 1, "runtime.n_envs": 1, "runtime.vec_env": "dummy",
         "runtime.telemetry_hz": 0, "budget.checkpoint_every": 128, "env.entry_point": ENV,
         "runtime.auto_resume": 1, "runtime.auto_resume_after_s": 0.5}


def plan_text() -> str:
    # long enough to be killed mid-training (see tests/faults/test_night.py: 1,536 steps took ~1 s)
    jobs = [{"name": "first", "algo": "PPO", "timesteps": 12_288, "set": FIRST},
            {"name": "second", "algo": "random", "env": "CartPole-v1", "episodes": 5, "after": ["first"],
             "set": {"runtime.vec_env": "dummy"}}]
    return yaml.safe_dump({"parallel": 2, "jobs": jobs}, sort_keys=False)


def runner_passes_since(runs_dir, since: float, passes: int):
    """True once the queue runner wrote its state ``passes`` times after ``since`` (each pass ends with a write)."""
    seen: set[float] = set()

    def check():
        state = read_queue(runs_dir)
        if state and state.updated_at and state.updated_at > since:
            seen.add(state.updated_at)
        return len(seen) >= passes and state

    return check


@pytest.mark.training
def test_a_kill_around_a_scheduled_resume_with_a_slowed_supervisor_holds_the_dependent_job(tmp_path, runs_dir):
    plan = tmp_path / "plan.yaml"
    plan.write_text(plan_text())
    assert (started := cli("queue", "run", str(plan), "--runs-dir", str(runs_dir))).returncode == 0, started.stderr

    def first_run():
        job = read_queue(runs_dir).job("first")
        run = runs_dir / job.run_id if job.run_id else None
        return run if run is not None and last_step(run) >= 400 else None

    run = wait_for(first_run, timeout=240, what="the first job's run to pass step 400")
    worker = psutil.Process(read_status(run).pid)
    supervisor = worker.parent()
    assert supervisor is not None and SUPERVISOR_MODULE in supervisor.cmdline()
    os.kill(supervisor.pid, signal.SIGSTOP)  # the supervisor learns of the death only once it runs again
    try:
        killed_at = time.time()
        os.kill(worker.pid, signal.SIGKILL)  # a zombie until its held parent reaps it: dead to every reader
        wait_for(lambda: read_status(run).state == "crashed", timeout=30, what="the run to read as crashed")
        TALLY["queue kills around a resume"] += 1
        held = wait_for(runner_passes_since(runs_dir, killed_at, 3), timeout=60,
                        what="three passes of the queue runner with the run dead and its supervisor held")
        jobs = {j.name: j for j in held.jobs}
        assert read_status(run).state == "crashed" and supervisor.status() == psutil.STATUS_STOPPED
        assert jobs["first"].status == "running", (jobs["first"].status, jobs["first"].reason)
        assert "deciding whether it resumes by itself" in jobs["first"].reason
        assert jobs["second"].status == "waiting" and jobs["second"].run_id is None, "the dependent waits"
        TALLY["queue dependents held"] += 1
    finally:
        os.kill(supervisor.pid, signal.SIGCONT)

    ended = wait_for(lambda: plan_over(runs_dir), timeout=400, what="the queue to end")
    assert ended.state == "finished", [(j.name, j.status, j.reason) for j in ended.jobs]
    for job in ended.jobs:  # the queue's record matches its runs' states
        assert read_status(runs_dir / job.run_id).state == job.status == "finished", (job.name, job.reason)
    first = read_status(run)
    assert first.attempt == 2 and first.auto_resume["count"] == 1
    assert first.auto_resume["history"][0]["kind"] == "killed", "its own supervisor decided, once it ran again"
    second = read_status(runs_dir / next(j.run_id for j in ended.jobs if j.name == "second"))
    assert second.started_at >= first.ended_at, "the dependent started after the first job's real end"
    TALLY["queue records matched"] += 1
