"""The training side of the GPU guard, without training: events written with codes, the paused status and
its wait, STOP heard while paused, the notify hook (a failing one changes nothing)."""

from __future__ import annotations

import threading

from core.telemetry.guard import GpuGuard, thermal_limits
from core.util.files import read_json
from core.util.jsonl import JsonlWriter, read_jsonl
from core.worker.guarding import GuardHandler
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


def replay_through_handler(tmp_path, platform):
    """The recorded run tests/core/run/sysmem_runs.py made (card filling, then 4x slower), fed to the handler as the
    worker feeds it once a second: the guard's NVML reading, the training's step, the clock."""
    from core.run.sysmem_fallback import watch_for
    from tests.core.run.sysmem_runs import HERE

    folder = HERE / "climbs_and_crawls"
    progress = [r for r in read_jsonl(folder / "metrics.jsonl") if r["kind"] == "progress"]
    readings = iter(read_jsonl(folder / "telemetry.jsonl"))
    reading = next(readings)
    now, step, seen = [0.0], [0], []
    guard = GpuGuard(0, thermal_limits(False, None, None, None, 0))  # driven by observe(): no thread
    handler = GuardHandler(tmp_path, guard, JsonlWriter(tmp_path / "metrics.jsonl"), lambda: False, lambda: step[0],
                           lambda: None, lambda ev: seen.append(ev.code), fallback=watch_for(platform),
                           clock=lambda: now[0])
    for rec in progress:
        while reading is not None and reading["t"] <= rec["t"]:
            guard.observe(reading["t"], reading["temperature_c"], reading["memory_used_bytes"],
                          reading["memory_total_bytes"])
            reading = next(readings, None)
        now[0], step[0] = rec["t"], rec["step"]
        assert handler() is False
    handler.out.close()
    return [e for e in read_jsonl(tmp_path / "metrics.jsonl") if e.get("code") != "gpu_memory"], seen


def test_on_windows_a_run_crawling_on_a_full_card_is_one_event_and_one_notification(tmp_path):
    events, seen = replay_through_handler(tmp_path, "win32")
    assert [e["code"] for e in events] == ["gpu_sysmem_fallback"]  # once, though it stays slow for 100 s more
    assert events[0]["level"] == "warning" and events[0]["step"] > 0
    message = events[0]["message"]
    assert message.startswith("Windows is moving GPU memory to system RAM: the run has slowed from 1,200 to 300 steps/s")
    assert "Sysmem Fallback Policy: Prefer No Sysmem Fallback" in message and "smaller batch" in message
    assert seen == ["gpu_memory", "gpu_sysmem_fallback"]  # the 95 % warning first, then the crawl


def test_off_windows_the_handler_watches_no_fallback(tmp_path):
    events, seen = replay_through_handler(tmp_path, "linux")
    assert events == [] and seen == ["gpu_memory"]
