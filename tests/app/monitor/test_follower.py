"""RunController / RunFollower: batches of everything a run folder gains, stale batches dropped."""

from __future__ import annotations

import json

from app.monitor.follower import RunFollower
from core.run.cache.columns import MetricsBatch, TelemetryBatch, metrics_batch
from core.run.status import RunStatus
from tests.app.fake_runs import append_jsonl, episodes, gpu_lines, make_fake_run


class Collected:
    """What the follower hands the window: ``records`` the episode rewards, ``telemetry`` the
    temperature readings (``"reset"`` where the file started over)."""

    def __init__(self, follower: RunFollower):
        self.records: list[float] = []
        self.telemetry: list = []
        self.lines: list[str] = []
        self.statuses: list[RunStatus] = []
        self.batches = 0
        follower.records.connect(self._records)
        follower.telemetry.connect(self._telemetry)
        follower.log_lines.connect(self.lines.extend)
        follower.status.connect(self.statuses.append)

    def _records(self, batch: MetricsBatch) -> None:
        self.batches += 1
        for part in batch.parts:
            if part.episodes is not None:
                self.records.extend(part.episodes[2].tolist())

    def _telemetry(self, batch: TelemetryBatch) -> None:
        if batch.reset:
            self.telemetry.append("reset")
        for part in batch.parts:
            self.telemetry.extend(part.series.get(("temperature_c", "gpu0"), ((), []))[1])


def test_follower_emits_every_record_in_batches_and_waits_for_a_torn_line(qtbot, runs_dir):
    run_dir = make_fake_run(runs_dir)
    metrics = run_dir / "metrics.jsonl"
    append_jsonl(metrics, episodes(0, 50))
    follower = RunFollower(poll_ms=50)
    try:
        got = Collected(follower)
        follower.follow(run_dir)
        qtbot.waitUntil(lambda: len(got.records) == 50, timeout=5000)
        assert got.statuses and got.statuses[-1].state == "running"
        assert got.batches == 1  # what was already there arrives as one batch

        # A record half written: it must not appear, nor be lost once completed.
        torn = json.dumps(episodes(50, 1)[0])
        append_jsonl(metrics, episodes(0, 0), torn=torn[:10])
        append_jsonl(run_dir / "telemetry.jsonl", gpu_lines(25))
        (run_dir / "worker.log").write_text("starting\nPPO on CartPole-v1\n")
        qtbot.waitUntil(lambda: len(got.telemetry) == 25 and len(got.lines) == 2, timeout=5000)
        assert len(got.records) == 50
        with open(metrics, "a", encoding="utf-8") as fh:
            fh.write(torn[10:] + "\n")
        append_jsonl(metrics, episodes(51, 49))
        qtbot.waitUntil(lambda: len(got.records) == 100, timeout=5000)
        assert got.records == [float(i) for i in range(100)]
        assert got.lines == ["starting", "PPO on CartPole-v1"]
    finally:
        follower.close()


def test_a_stale_generation_is_ignored(qtbot, runs_dir):
    first = make_fake_run(runs_dir, name="first")
    second = make_fake_run(runs_dir, name="second")
    append_jsonl(first / "metrics.jsonl", episodes(0, 10))
    append_jsonl(second / "metrics.jsonl", episodes(100, 3))
    follower = RunFollower(poll_ms=50)
    try:
        got = Collected(follower)
        old = follower.follow(first)
        new = follower.follow(second)
        assert new == old + 1
        # A batch of the first run still queued when the user switched: it must be dropped.
        follower.controller.records.emit(old, metrics_batch(episodes(0, 10)))
        qtbot.waitUntil(lambda: len(got.records) >= 3, timeout=5000)
        qtbot.wait(300)
        assert sorted(got.records) == [100.0, 101.0, 102.0]
    finally:
        follower.close()


def test_status_change_and_crash_are_reported(qtbot, runs_dir):
    run_dir = make_fake_run(runs_dir)
    follower = RunFollower(poll_ms=50)
    try:
        got = Collected(follower)
        follower.follow(run_dir)
        qtbot.waitUntil(lambda: bool(got.statuses), timeout=5000)
        status = json.loads((run_dir / "status.json").read_text())
        status.update(pid=2**22 + 7, pid_create_time=1.0)  # a worker that no longer exists
        (run_dir / "status.json").write_text(json.dumps(status))
        qtbot.waitUntil(lambda: got.statuses[-1].state == "crashed", timeout=5000)
    finally:
        follower.close()


def test_rewritten_telemetry_file_starts_over_with_a_reset(qtbot, runs_dir):
    run_dir = make_fake_run(runs_dir)
    follower = RunFollower(poll_ms=50)
    try:
        got = Collected(follower)
        append_jsonl(run_dir / "telemetry.jsonl", gpu_lines(40))
        follower.follow(run_dir)
        qtbot.waitUntil(lambda: len(got.telemetry) == 40, timeout=5000)
        (run_dir / "telemetry.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gpu_lines(5)))
        qtbot.waitUntil(lambda: len(got.telemetry) == 46, timeout=5000)
        assert got.telemetry[40] == "reset"
    finally:
        follower.close()


def test_stop_of_nothing_says_not_running(qtbot):
    follower = RunFollower()
    try:
        with qtbot.waitSignal(follower.stop_finished, timeout=2000) as blocker:
            follower.stop(1.0)
        assert blocker.args[0] == "not running"
    finally:
        follower.close()
