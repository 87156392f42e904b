"""The supervisor's decisions after its worker ended, on run folders written by the test."""

from __future__ import annotations

import signal
import threading
import time

from core.launch.supervisor import death_reason, settle
from core.run.layout import RunDir
from core.run.status import read_status, write_status
from tests.training_helpers import make_run


def ended_worker_run(runs_dir, state="running"):
    run = make_run(runs_dir, {"budget": {"total_timesteps": 1000}})
    write_status(run, state=state, pid=2 ** 22 + 17, pid_create_time=1.0, launched_at=1234.5)
    return run


def test_a_worker_that_left_its_run_running_is_marked_crashed_with_the_signal(runs_dir):
    run = ended_worker_run(runs_dir)
    event, reason, decision = settle(run, 1234.5, -signal.SIGKILL)
    status = read_status(run)
    assert event == "crashed" and status.state == "crashed" and status.recorded_state is None
    assert decision is not None and decision.due_at is None, "a run of its own: automatic resume is off"
    assert "SIGKILL" in reason and f"no checkpoint to resume from: restart it with `rlpanel restart {run.name}`" in reason
    assert status.error["message"] == reason == status.exit_reason


def test_an_end_the_worker_recorded_is_reported_as_recorded(runs_dir):
    run = ended_worker_run(runs_dir, "failed")
    write_status(run, exit_reason="ValueError: boom")
    assert settle(run, 1234.5, 1)[:2] == ("failed", "ValueError: boom")
    assert read_status(run).state == "failed"


def test_a_newer_attempt_is_never_touched(runs_dir):
    run = ended_worker_run(runs_dir)
    write_status(run, state="starting", pid=None, launched_at=9999.0)  # a resume launched meanwhile
    assert settle(run, 1234.5, -signal.SIGKILL) is None
    assert read_status(run).state in ("starting", "crashed")  # untouched on disk
    assert '"starting"' in RunDir(run).status.read_text()


def test_a_stop_in_progress_records_the_end_itself(runs_dir):
    run = ended_worker_run(runs_dir)
    RunDir(run).stop_request.write_text("requested\n")

    def the_stop_records_it():
        time.sleep(1.0)
        write_status(run, state="stopped", exit_reason="terminated: no graceful stop within 60 s")

    thread = threading.Thread(target=the_stop_records_it)
    thread.start()
    assert settle(run, 1234.5, -signal.SIGTERM)[:2] == ("stopped", "terminated: no graceful stop within 60 s")
    thread.join()


def test_death_reasons_in_words():
    assert "out-of-memory killer" in death_reason(-9, "linux")
    assert "SIGSEGV" in death_reason(-11, "linux")
    assert "Task Manager" in death_reason(1, "win32")
    assert "0xc0000005" in death_reason(0xC0000005, "win32")
    assert "exited with code 3" in death_reason(3, "linux")


def test_the_log_is_rotated_past_its_bound_and_appenders_go_on_at_its_start(tmp_path):
    from core.launch.supervisor import rotate_log

    log = tmp_path / "worker.log"
    writer = open(log, "ab", buffering=0)  # the worker's stdout: an appending descriptor kept open
    try:
        writer.write(b"old line\n" * 200)
        assert not rotate_log(log, max_bytes=10_000)
        writer.write(b"old line\n" * 1000)
        assert rotate_log(log, max_bytes=10_000)
        writer.write(b"new line\n")
    finally:
        writer.close()
    assert (tmp_path / "worker.log.1").read_bytes() == b"old line\n" * 1200
    lines = log.read_text().splitlines()
    assert lines[-1] == "new line" and "old line" not in lines
    assert not list(tmp_path.glob(".*.tmp"))
