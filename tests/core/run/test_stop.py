"""Issue 11, point 9: a stop sent while the run is ``starting`` is kept; a worker that cannot stop
(SIGSTOPped) is terminated with an exit reason that names only a checkpoint that exists."""

from __future__ import annotations

import os
import signal

import pytest

from core.launch.control import launch_worker, request_stop, stop_run
from core.run.checkpoints import find_checkpoint
from core.run.status import read_status
from tests.training_helpers import last_step, make_run, wait_for, wait_state

pytestmark = pytest.mark.training

LONG = {"algo": "PPO", "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1}, "runtime": {"n_envs": 1}}


def test_a_stop_sent_while_starting_stops_the_run_gracefully(runs_dir):
    run = make_run(runs_dir, {**LONG, "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 100_000}})
    proc = launch_worker(run, reap=False)
    assert read_status(run).state == "starting"
    assert stop_run(run, timeout=180) == "graceful"
    proc.wait(60)
    status = read_status(run)
    assert status.state == "stopped", status
    assert status.exit_reason.startswith("stopped at step")
    assert find_checkpoint(run).checkpoint is not None, "a graceful stop saves a checkpoint"


def test_a_frozen_worker_is_terminated_and_the_reason_claims_no_missing_checkpoint(runs_dir):
    run = make_run(runs_dir, {**LONG, "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 10_000_000}})
    proc = launch_worker(run, reap=False)
    wait_state(run, ("running",))
    wait_for(lambda: last_step(run) > 0, what="training progress")
    os.kill(read_status(run).pid, signal.SIGSTOP)
    assert stop_run(run, timeout=1, poll=0.1, term_grace_s=1) == "terminated"
    proc.wait(30)
    status = read_status(run)
    assert status.state == "stopped"
    assert find_checkpoint(run).checkpoint is None
    assert f"it has no checkpoint to resume from: restart it with `rlpanel restart {run.name}`" in status.exit_reason
    assert "resumes from" not in status.exit_reason


def test_a_worker_killed_before_it_wrote_its_pid_reads_crashed_within_seconds(runs_dir):
    import subprocess
    import sys
    import time

    from core.run.status import LAUNCH_CHECK_S, write_status

    run = make_run(runs_dir, {"budget": {"total_timesteps": 1000}})
    write_status(run, state="starting", pid=None)
    assert read_status(run).state == "starting"
    # a process whose command line names the worker module and this run: a worker still loading
    loading = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "core.worker.main", str(run)])
    try:
        time.sleep(LAUNCH_CHECK_S + 0.5)
        assert read_status(run).state == "starting"
    finally:
        loading.kill()
        loading.wait()
    status = read_status(run)
    assert status.state == "crashed" and status.recorded_state == "starting"


def test_a_run_that_checkpoints_every_few_hundred_steps_still_hears_its_stop(runs_dir):
    """Each checkpoint flushes the records; that flush once postponed the STOP check forever."""
    run = make_run(runs_dir, {**LONG, "runtime": {"n_envs": 2},
                              "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 256}})
    proc = launch_worker(run, reap=False)
    wait_state(run, ("running",))
    wait_for(lambda: last_step(run) > 2_000, what="a few checkpoints")
    assert stop_run(run, timeout=60, term_grace_s=1) == "graceful"
    proc.wait(60)
    assert read_status(run).exit_reason.startswith("stopped at step")


def test_a_stop_that_comes_once_the_budget_is_met_leaves_the_run_finished(runs_dir):
    # PPO collects whole rollouts: a budget of 10 steps starts a rollout of 128 slow steps (~2.5 s); the stop,
    # seen at the first check (~1 s in, past step 10), ends it, and must not call a run that met its budget "stopped"
    run = make_run(runs_dir, {**LONG, "env": {"entry_point": "tests.core.run.fast_env:FastEpisodesEnv",
                                              "kwargs": {"delay_s": 0.02}},
                              "budget": {"total_timesteps": 10, "checkpoint_every": 0}})
    proc = launch_worker(run, reap=False)
    request_stop(run)  # the STOP waits for the worker's first check
    assert proc.wait(240) == 0
    status = read_status(run)
    assert status.state == "finished", status
    steps = int(status.exit_reason.split()[1])
    assert 10 < steps < 128  # the stop did cut the rollout, and the reason says so
    assert status.exit_reason == (f"reached {steps} steps, past the budget of 10 (whole rollouts of 1 x 128; "
                                     "a stop ended the last one early)")
