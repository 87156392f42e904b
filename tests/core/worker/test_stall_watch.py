"""The watchdog's last look: a run whose steps came again after a stall, and which ended before the watchdog's next
look (its last 200 steps took less than one look's 0.2 s), still records that the stall is over."""

from __future__ import annotations

import time
from types import SimpleNamespace

from core.run.status import read_status, write_status
from core.util.jsonl import JsonlWriter, read_jsonl
from core.worker.watchdog import StallWatch


def test_steps_that_come_again_just_before_the_end_close_the_stall(tmp_path):
    write_status(tmp_path, state="running")
    beats = SimpleNamespace(beat=time.monotonic() - 10.0, longest_gap=0.01)  # no step for 10 s
    steps = [300]
    out = JsonlWriter(tmp_path / "metrics.jsonl")
    watch = StallWatch(tmp_path, out, beats, lambda: steps[0], configured=600.0, action="alert", notify=False)
    watch.start()  # a look every 5 s at this limit: none comes before stop() below
    watch.check(time.monotonic() + 1000.0)  # one look past the limit: stalled
    assert read_status(tmp_path).stalled is not None
    beats.beat, steps[0] = time.monotonic(), 512  # the steps come again; training ends at once
    watch.stop()
    out.close()
    codes = [r.get("code") for r in read_jsonl(tmp_path / "metrics.jsonl") if r.get("kind") == "event"]
    assert codes == ["stalled", "stall_over"]
    assert read_status(tmp_path).stalled is None


def test_a_run_still_stalled_at_the_end_is_not_said_to_have_recovered(tmp_path):
    write_status(tmp_path, state="running")
    beats = SimpleNamespace(beat=time.monotonic() - 10.0, longest_gap=0.01)
    out = JsonlWriter(tmp_path / "metrics.jsonl")
    watch = StallWatch(tmp_path, out, beats, lambda: 300, configured=600.0, action="alert", notify=False).start()
    watch.check(time.monotonic() + 1000.0)
    watch.stop()  # ended (stopped by hand) with no step since the stall
    out.close()
    codes = [r.get("code") for r in read_jsonl(tmp_path / "metrics.jsonl") if r.get("kind") == "event"]
    assert codes == ["stalled"]
