"""Issue 28: the progress watchdog. A run whose env hangs reads ``stalled``, says so in an event and a
notification, and does what ``runtime.on_stall`` says; steps that come again clear it."""

from __future__ import annotations

import time

import pytest

from core.launch.control import launch_worker, resume_run
from core.notify.settings import NotifySettings, Target, save_settings
from core.run.checkpoints import find_checkpoint
from core.run.status import read_status
from tests.notify_sink import NotifySink
from tests.training_helpers import make_run, records, run_worker, wait_state

pytestmark = pytest.mark.training

ENV = "tests.core.night.night_env:NightEnv"


def night_run(runs_dir, marker, *, hang_s, on_stall="alert", vec_env="dummy", total=512, **runtime):
    return make_run(runs_dir, {
        "algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "env": {"entry_point": ENV, "kwargs": {"hang_at": 300, "hang_s": hang_s, "marker": str(marker)}},
        "runtime": {"n_envs": 1, "vec_env": vec_env, "stall_after_s": 1.5, "on_stall": on_stall, "telemetry_hz": 0,
                    **runtime},
        "budget": {"total_timesteps": total, "checkpoint_every": 128}})


def event_codes(run):
    return [r.get("code") for r in records(run, "event") if r.get("code")]


def test_a_hung_env_reads_stalled_is_notified_and_clears_when_steps_come_again(runs_dir, tmp_path):
    with NotifySink() as sink:
        save_settings(NotifySettings((Target(sink.url, ("stalled",)),)))
        run = night_run(runs_dir, tmp_path / "hung", hang_s=6.0)
        proc = launch_worker(run, reap=False)
        seen = set()
        while proc.poll() is None:
            seen.add(read_status(run).state)
            time.sleep(0.1)
        msg = sink.wait(lambda m: "stalled" in m["title"])
    assert read_status(run).state == "finished", (run / "worker.log").read_text()[-2000:]
    assert "stalled" in seen, f"the hang was read as stalled while it lasted (seen {seen})"
    assert event_codes(run).count("stalled") == 1 and event_codes(run).count("stall_over") == 1
    stalled = next(r for r in records(run, "event") if r.get("code") == "stalled")
    assert "no step for" in stalled["message"] and "since step 299" in stalled["message"]
    assert "runtime.stall_after_s" in stalled["message"] and "on_stall: alert" in stalled["message"]
    assert "no step for" in msg["message"] and run.name in msg["title"]
    assert read_status(run).stalled is None and read_status(run).stall_limit_s == 1.5


def test_on_stall_stop_ends_a_run_whose_env_deadlocked_in_the_worker_and_it_resumes(runs_dir, tmp_path):
    """vec_env dummy: the training thread itself is stuck in the env, so the watchdog gives it up and records the
    stop with the checkpoint it resumes from."""
    run = night_run(runs_dir, tmp_path / "deadlock", hang_s=None, on_stall="stop")
    assert run_worker(run, timeout=120) == 0
    status = read_status(run)
    assert status.state == "stopped", (run / "worker.log").read_text()[-2000:]
    assert "stalled at step 299" in status.exit_reason and "(from its checkpoint at step 256)" in status.exit_reason
    assert {"stalled", "stall_stop"} <= set(event_codes(run))
    assert find_checkpoint(run).checkpoint.step == 256
    resume_run(run, reap=False)
    assert wait_state(run, ("finished", "failed", "crashed"), timeout=120) == "finished"


def test_on_stall_stop_with_env_processes_checkpoints_where_it_stalled_and_resumes(runs_dir, tmp_path):
    """vec_env subproc: the env processes are ended, the training thread comes back and stops with a checkpoint of
    its own, at the step it stalled at."""
    run = night_run(runs_dir, tmp_path / "deadlock", hang_s=None, on_stall="stop", vec_env="subproc")
    assert run_worker(run, timeout=120) == 0
    status = read_status(run)
    assert status.state == "stopped", (run / "worker.log").read_text()[-2000:]
    assert status.exit_reason == "stopped at step 299 (stalled at step 299)"
    assert "stall_stop" not in event_codes(run), "the training thread came back: nothing was given up"
    assert find_checkpoint(run).checkpoint.step == 299
    resume_run(run, reap=False)
    assert wait_state(run, ("finished", "failed", "crashed"), timeout=120) == "finished"


def test_a_worker_too_wedged_for_its_watchdog_reads_stalled_from_its_silent_records(runs_dir):
    """The readers' own judgement: a live worker whose records have not grown for twice its stall limit (at least
    10 minutes) reads stalled though its status never said so; one that wrote lately reads running."""
    import os

    from core.run.layout import RunDir
    from tests.app.fake_runs import append_jsonl, make_fake_run

    run = make_fake_run(runs_dir, state="running", stall_limit_s=300.0)  # this process is its worker
    append_jsonl(RunDir(run).metrics, [{"kind": "progress", "step": 4096, "t": time.time(), "fps": 900.0, "total": 10000}])
    assert read_status(run).state == "running"
    quiet_since = time.time() - 601
    os.utime(RunDir(run).metrics, (quiet_since, quiet_since))
    status = read_status(run)
    assert status.state == "stalled" and status.recorded_state == "running" and status.stalled["by"] == "reader"
    from core.run.status import stall_note

    assert stall_note(status) == f"no step since {time.strftime('%H:%M', time.localtime(quiet_since))}"
