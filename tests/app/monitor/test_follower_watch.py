"""The follower reads a run's new records when the file system says they changed; it polls where it cannot watch."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QFileSystemWatcher

import app.monitor.file_watch as file_watch
from app.monitor.follower import RunFollower
from tests.app.fake_runs import append_jsonl, episodes, gpu_lines, make_fake_run
from tests.app.monitor.test_follower import Collected

NEVER_MS = 600_000  # a poll interval no test waits for: what arrives came through the watcher


def follow(qtbot, run_dir, **kwargs) -> tuple[RunFollower, Collected]:
    follower = RunFollower(**kwargs)
    got = Collected(follower)
    follower.follow(run_dir)
    qtbot.waitUntil(lambda: bool(got.statuses), timeout=5000)  # the first read is done
    return follower, got


def test_an_appended_record_arrives_without_waiting_for_the_poll(qtbot, runs_dir):
    run_dir = make_fake_run(runs_dir)
    append_jsonl(run_dir / "metrics.jsonl", episodes(0, 5))
    follower, got = follow(qtbot, run_dir, poll_ms=NEVER_MS)
    try:
        qtbot.waitUntil(lambda: len(got.records) == 5, timeout=5000)
        assert follower.controller.watching and follower.controller.not_watched is None
        append_jsonl(run_dir / "metrics.jsonl", episodes(5, 3))
        qtbot.waitUntil(lambda: len(got.records) == 8, timeout=5000)
        # a burst of lines written one by one is read in few batches, not one per line
        batches = got.batches
        for i in range(8, 28):
            append_jsonl(run_dir / "metrics.jsonl", episodes(i, 1))
        qtbot.waitUntil(lambda: len(got.records) == 28, timeout=5000)
        assert got.records == [float(i) for i in range(28)]
        assert got.batches - batches < 20
        # a file the run creates later (the log) and status.json replaced whole are noticed too
        (run_dir / "worker.log").write_text("starting\n")
        qtbot.waitUntil(lambda: got.lines == ["starting"], timeout=5000)
        status = (run_dir / "status.json").read_text().replace('"running"', '"paused"')
        (run_dir / "status.json.tmp").write_text(status)
        (run_dir / "status.json.tmp").replace(run_dir / "status.json")
        qtbot.waitUntil(lambda: got.statuses[-1].state == "paused", timeout=5000)
        # telemetry rewritten whole (the recorder thins old samples): the new file is watched in turn
        telemetry = run_dir / "telemetry.jsonl"
        append_jsonl(telemetry, gpu_lines(10))
        qtbot.waitUntil(lambda: len(got.telemetry) == 10, timeout=5000)
        append_jsonl(run_dir / "thinned.tmp", gpu_lines(2))
        (run_dir / "thinned.tmp").replace(telemetry)
        qtbot.waitUntil(lambda: got.telemetry[-3:] == ["reset", 60, 60], timeout=5000)
        append_jsonl(telemetry, gpu_lines(3))
        qtbot.waitUntil(lambda: len(got.telemetry) == 16, timeout=5000)
    finally:
        follower.close()


def test_polling_is_the_fallback_when_asked_for(qtbot, runs_dir):
    run_dir = make_fake_run(runs_dir)
    follower, got = follow(qtbot, run_dir, poll_ms=50, watch=False)
    try:
        assert not follower.controller.watching and follower.controller.not_watched == "polling was asked for"
        append_jsonl(run_dir / "metrics.jsonl", episodes(0, 4))
        qtbot.waitUntil(lambda: len(got.records) == 4, timeout=5000)
    finally:
        follower.close()


class RefusingWatcher(QFileSystemWatcher):
    """A watcher at the OS' limit of watched files: it refuses every path (as inotify does then)."""

    def addPath(self, path: str) -> bool:  # noqa: N802 (Qt's name)
        return False


@pytest.mark.parametrize("why", ["network drive", "watch refused"])
def test_a_folder_that_cannot_be_watched_is_polled(qtbot, runs_dir, monkeypatch, why):
    if why == "network drive":
        monkeypatch.setattr(file_watch, "network_drive", lambda path: "nfs4")
    else:
        monkeypatch.setattr(file_watch, "QFileSystemWatcher", RefusingWatcher)
    run_dir = make_fake_run(runs_dir)
    follower, got = follow(qtbot, run_dir, poll_ms=50)
    try:
        reason = follower.controller.not_watched
        assert not follower.controller.watching
        assert reason == ("the run folder is on a network drive (nfs4)" if why == "network drive"
                          else "the file system refused to watch the run folder")
        append_jsonl(run_dir / "metrics.jsonl", episodes(0, 4))
        qtbot.waitUntil(lambda: len(got.records) == 4, timeout=5000)
    finally:
        follower.close()
