"""Issue 44, item 3: a queued job whose run crashed is not over while its automatic resume is due or still being
decided, so a job ``after`` it waits; a job recorded crashed follows its run again when the run lives again; a
planned resume that is refused says so instead of leaving the job waiting. Real run folders, read by the queue's
own reconcile; the runs' statuses written as their worker and supervisor write them."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from core.launch import auto_resume
from core.queue.plan import parse_plan
from core.queue.record import RUNNING, WAITING
from core.queue.state import new_state, ready_jobs, reconcile
from core.run.status import SUPERVISOR_MODULE, read_status, write_status
from tests.training_helpers import make_run

PLAN = {"jobs": [{"name": "first", "algo": "PPO", "env": "CartPole-v1", "timesteps": 512},
                 {"name": "second", "algo": "PPO", "env": "CartPole-v1", "timesteps": 512, "after": ["first"]}]}


@pytest.fixture
def queue(runs_dir):
    """A queue whose first job runs (its run folder made, no worker) and whose second waits for it."""
    state = new_state(parse_plan(PLAN), "plan.yaml")
    run = make_run(runs_dir, {"algo": "PPO", "budget": {"total_timesteps": 512}})
    write_status(run, queue={"id": state.id, "job": "first"})
    first = state.job("first")
    first.status, first.run_id, first.started_at = RUNNING, run.name, time.time()
    return state, run


def crash(run, **auto):
    """The worker's death as its supervisor records it (attempt 1), with ``auto_resume`` as given."""
    write_status(run, state="crashed", attempt=1, ended_at=time.time(), failure_kind="killed",
                 exit_reason="the worker was killed (SIGKILL) at step 256", auto_resume=auto or None)


def test_a_crash_whose_resume_is_not_yet_decided_keeps_the_job_running_and_its_dependent_waiting(queue, runs_dir):
    state, run = queue
    # a process that reads, to a process scan, as the run's supervisor, still alive to plan the resume
    supervisor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-m", SUPERVISOR_MODULE, str(run)])
    try:
        crash(run)  # the supervisor wrote "crashed"; its plan comes next (the moment a loaded machine stretches)
        reconcile(runs_dir, state)
        first = state.job("first")
        assert first.status == RUNNING and "deciding whether it resumes by itself" in first.reason
        assert ready_jobs(state) == [], "the dependent starts only once the first job has ended"
        auto_resume.plan(run)  # decided: no checkpoint to resume from, so it is over
        reconcile(runs_dir, state)
        assert first.status == "crashed" and [j.name for j in ready_jobs(state)] == ["second"]
    finally:
        supervisor.kill()
        supervisor.wait()


def test_a_job_recorded_crashed_follows_its_run_again_when_a_resume_is_planned(queue, runs_dir):
    state, run = queue
    first = state.job("first")
    first.status, first.ended_at, first.reason = "crashed", time.time(), "killed"  # as an older runner recorded it
    crash(run, attempt=1, count=1, limit=2, due_at=time.time() + 600)
    reconcile(runs_dir, state)
    assert first.status == RUNNING and "resumes by itself at" in first.reason and first.ended_at is None
    write_status(run, state="finished", ended_at=time.time())
    reconcile(runs_dir, state)
    assert first.status == "finished", "the queue's record says how its run ended"


def test_a_job_crashed_for_good_stays_crashed(queue, runs_dir):
    state, run = queue
    first = state.job("first")
    first.status, first.ended_at = "crashed", 123.0
    crash(run, attempt=1, limit=0)
    reconcile(runs_dir, state)
    assert (first.status, first.ended_at) == ("crashed", 123.0)
    assert state.job("second").status == WAITING


def test_a_refused_automatic_resume_is_recorded_as_given_up_and_ends_the_job(queue, runs_dir):
    state, run = queue
    crash(run, attempt=1, count=1, limit=2, due_at=time.time() - 1)  # due, but the run has no checkpoint
    assert auto_resume.resume_if_due(run) is False
    auto = read_status(run).auto_resume
    assert auto["due_at"] is None and auto["gave_up"].startswith("the automatic resume was refused: ")
    assert "no complete checkpoint" in auto["gave_up"]
    reconcile(runs_dir, state)
    assert state.job("first").status == "crashed"
