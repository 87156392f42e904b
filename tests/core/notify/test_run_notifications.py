"""Notifications from the run's own side, received by a local HTTP server: a run that finishes,
one that fails, a worker killed with SIGKILL (its supervisor notices), and a queue's end; no URL
in any file of the run folder or log."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from core.launch.control import launch_worker, resume_run, stop_run
from core.notify.settings import NotifySettings, Target, save_settings
from core.run.status import read_status
from core.run.store import RunStore
from tests.notify_sink import SECRET, NotifySink
from tests.training_helpers import cli, last_step, make_run, run_worker, wait_for, wait_state

pytestmark = pytest.mark.training

SMALL = {"algo": "A2C", "budget": {"total_timesteps": 600}}
LONG = {"algo": "PPO", "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1}, "runtime": {"n_envs": 1},
        "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 256}}


def configure(sink: NotifySink, events: tuple[str, ...] | None = None) -> None:
    save_settings(NotifySettings((Target(sink.url, events),)))


def assert_no_secret_under(*folders: Path) -> None:
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and path.name != "notify.yaml":
                data = path.read_bytes()
                assert SECRET.encode() not in data and b"json://" not in data, f"a notification URL in {path}"


def test_a_finished_run_is_notified_with_its_reward_and_no_url_lands_in_the_folder(runs_dir, user_home):
    with NotifySink() as sink:
        configure(sink)
        run = make_run(runs_dir, SMALL)
        assert run_worker(run) == 0
        msg = sink.wait(lambda m: "finished" in m["title"])
    assert run.name in msg["title"] and run.name in msg["message"]
    status = read_status(run)
    assert status.state == "finished" and status.exit_reason in msg["message"]
    assert "Final reward" in msg["message"] and "mean of the last" in msg["message"]
    assert len(sink.received) == 1, "one notification per end: the worker under a supervisor does not send too"
    assert_no_secret_under(run, user_home)


def test_a_failing_run_is_notified_with_the_reason(runs_dir):
    with NotifySink() as sink:
        configure(sink, ("failed", "crashed"))
        run = make_run(runs_dir, {"env": {"entry_point": "no_such_pkg.envs:Missing"}, "budget": {"total_timesteps": 100}})
        assert run_worker(run) == 1
        msg = sink.wait(lambda m: "failed" in m["title"])
    assert run.name in msg["title"] and "No module named 'no_such_pkg'" in msg["message"]
    assert_no_secret_under(run)


def test_a_worker_killed_with_sigkill_is_marked_crashed_and_notified_within_a_minute(runs_dir):
    with NotifySink() as sink:
        configure(sink)
        run = make_run(runs_dir, LONG)
        supervisor = launch_worker(run, reap=False)
        wait_state(run, ("running",))
        wait_for(lambda: last_step(run) > 600, what="training progress")
        worker = read_status(run).pid
        assert worker != supervisor.pid, "status.json names the worker, not its supervisor"
        os.kill(worker, signal.SIGKILL)
        killed = time.monotonic()
        msg = sink.wait(lambda m: "crashed" in m["title"], timeout=60)
        assert time.monotonic() - killed < 60
        assert supervisor.wait(30) == 128 + signal.SIGKILL
    status = read_status(run)
    assert status.state == "crashed" and status.recorded_state is None, "written by the supervisor"
    # a run of its own (auto_resume 0): nothing resumes it, so the reason names the command
    assert "SIGKILL" in status.exit_reason and f"resume it with `rlpanel resume {run.name}` (from its checkpoint at step" \
        in status.exit_reason
    assert run.name in msg["title"] and "SIGKILL" in msg["message"] and "It got to step" in msg["message"]
    assert not psutil.pid_exists(worker) or psutil.Process(worker).status() == psutil.STATUS_ZOMBIE
    # the crashed run resumes as before, under a new supervisor
    with NotifySink() as sink:
        configure(sink, ("stopped",))
        resume_run(run, more_steps=256)
        wait_state(run, ("finished",), timeout=240)
        assert read_status(run).state == "finished"
    assert_no_secret_under(run)


def test_a_stop_that_terminates_the_worker_is_reported_as_stopped_not_crashed(runs_dir):
    with NotifySink() as sink:
        configure(sink)
        run = make_run(runs_dir, {**LONG, "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 10_000_000}})
        supervisor = launch_worker(run, reap=False)
        wait_state(run, ("running",))
        wait_for(lambda: last_step(run) > 0, what="training progress")
        os.kill(read_status(run).pid, signal.SIGSTOP)  # frozen: only a kill of its tree ends it
        assert stop_run(run, timeout=1, poll=0.1, term_grace_s=1) == "terminated"
        msg = sink.wait(lambda m: "stopped" in m["title"], timeout=90)
        supervisor.wait(60)
    assert read_status(run).state == "stopped"
    assert "terminated: no graceful stop" in msg["message"]
    assert not [m for m in sink.received if "crashed" in m["title"]]


def test_a_queue_end_is_notified_with_a_line_over_its_jobs(tmp_path, runs_dir, user_home):
    plan = tmp_path / "plan.yaml"
    plan.write_text("""
parallel: 1
jobs:
  - {name: broken, env: "no_such_pkg.envs:Missing", timesteps: 100}
  - {name: after, algo: random, env: CartPole-v1, episodes: 3}
""")
    with NotifySink() as sink:
        configure(sink, ("queue_end",))
        done = cli("queue", "run", str(plan), "--runs-dir", str(runs_dir))
        assert done.returncode == 0, done.stderr
        msg = sink.wait(lambda m: "queue" in m["title"], timeout=180)
    assert "finished with failures" in msg["title"]
    assert "2 jobs: 1 failed, 1 finished" in msg["message"] or "2 jobs: 1 finished, 1 failed" in msg["message"]
    assert "broken" in msg["message"] and "no_such_pkg" in msg["message"]
    assert [m["title"] for m in sink.received] == [msg["title"]], "the runs' own ends are not in queue_end's list"
    assert_no_secret_under(runs_dir, user_home)


def test_an_unsupervised_worker_sends_its_own_end(runs_dir):
    import subprocess

    from core.launch.control import worker_command

    with NotifySink() as sink:
        configure(sink, ("finished",))
        run = make_run(runs_dir, SMALL)
        env = {k: v for k, v in os.environ.items() if k != "RLPANEL_SUPERVISED"}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])
        assert subprocess.run(worker_command(run), env=env, capture_output=True, timeout=240).returncode == 0
        msg = sink.wait(lambda m: "finished" in m["title"], timeout=30)
    assert run.name in msg["title"]


def test_a_queue_job_killed_with_its_supervisor_is_reported_by_the_queue_runner(tmp_path, runs_dir):
    plan = tmp_path / "plan.yaml"
    plan.write_text("jobs:\n  - {name: long, algo: PPO, env: CartPole-v1, timesteps: 10000000}\n")
    with NotifySink() as sink:
        configure(sink, ("crashed", "queue_end"))
        assert cli("queue", "run", str(plan), "--runs-dir", str(runs_dir)).returncode == 0
        run = wait_for(lambda: next((i.path for i in RunStore(runs_dir).list()), None), timeout=120, what="the job's run")
        wait_state(run, ("running",))
        worker = psutil.Process(read_status(run).pid)
        supervisor = worker.parent()
        assert "core.launch.supervisor" in supervisor.cmdline()
        for proc in (supervisor, worker):  # the whole group at once, as a killed process group dies
            proc.kill()
        crashed = sink.wait(lambda m: "crashed" in m["title"], timeout=60)
        ended = sink.wait(lambda m: "queue" in m["title"], timeout=60)
    assert run.name in crashed["title"] and "queue runner reports it" in crashed["message"]
    assert "1 crashed" in ended["message"]
    assert len([m for m in sink.received if "crashed" in m["title"]]) == 1
