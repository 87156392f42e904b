"""The training side of the GPU guard, without training: events written with codes, the paused status and
its wait, STOP heard while paused, the notify hook (a failing one changes nothing)."""

from __future__ import annotations

import threading

from core.telemetry.guard import GpuGuard, thermal_limits
from core.training.guarding import GuardHandler
from core.util.files import read_json
from core.util.jsonl import JsonlWriter, read_jsonl
from tests.training_helpers import wait_for

# status.json is read as written: read_status would call a paused run without a worker pid crashed


def handler_for(tmp_path, stop=lambda: False, notify=None):
    guard = GpuGuard(0, thermal_limits(True, 85, 75, None, 0))  # driven by observe(): no thread
    out = JsonlWriter(tmp_path / "metrics.jsonl")
    flushed = []
    handler = GuardHandler(tmp_path, guard, out, stop, lambda: 1234, lambda: flushed.append(True), notify)
    return guard, handler, flushed


def test_paused_until_cool_with_status_events_and_notifications(tmp_path):
    seen = []

    def notify(ev):
        seen.append(ev.code)
        raise RuntimeError("no network")  # a failing notification changes nothing

    guard, handler, flushed = handler_for(tmp_path, notify=notify)
    guard.observe(0, 60, 1, 100)
    assert handler() is False and read_jsonl(tmp_path / "metrics.jsonl") == []
    guard.observe(1, 90, 1, 100)
    guard.observe(11, 90, 99, 100)
    result = []
    thread = threading.Thread(target=lambda: result.append(handler()))
    thread.start()
    wait_for(lambda: (read_json(tmp_path / "status.json") or {}).get("state") == "paused", 10, "paused")
    assert "90 C" in read_json(tmp_path / "status.json")["pause_reason"] and flushed == [True]
    guard.observe(20, 70, 1, 100)
    thread.join(10)
    assert result == [False]
    status = read_json(tmp_path / "status.json")
    assert status["state"] == "running" and status["pause_reason"] is None and status["paused_s"] >= 0
    events = read_jsonl(tmp_path / "metrics.jsonl")
    assert [e["code"] for e in events] == ["thermal_pause", "gpu_memory", "thermal_resume"]
    assert all(e["step"] == 1234 and e["kind"] == "event" for e in events)
    assert seen == ["thermal_pause", "gpu_memory", "thermal_resume"]


def test_a_stop_while_paused_ends_the_wait(tmp_path):
    stop = threading.Event()
    guard, handler, _ = handler_for(tmp_path, stop=stop.is_set)
    guard.observe(0, 95, None, None)
    guard.observe(10, 95, None, None)
    result = []
    thread = threading.Thread(target=lambda: result.append(handler()))
    thread.start()
    wait_for(lambda: (read_json(tmp_path / "status.json") or {}).get("state") == "paused", 10, "paused")
    stop.set()
    thread.join(10)
    assert result == [True] and guard.paused  # still hot: the stop, not the guard, ended the wait
