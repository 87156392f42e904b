"""The Log tab: each message once (worker.log's echo of an event is dropped, the event shown), and it
opens at the left edge with long lines wrapped, following new text down, never sideways."""

from __future__ import annotations

import json
import re
import time

from app.monitor.log_panel import LogPanel
from core.run.records import event, event_echo
from tests.app.fake_runs import make_fake_run

LONG = "gym warning: " + "the observation space is not normalised " * 20  # ~800 characters


def test_a_long_line_wraps_and_the_pane_stays_at_its_left_edge(qtbot):
    panel = LogPanel()
    qtbot.addWidget(panel)
    panel.resize(420, 300)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_run("a run")
    panel.add_log_lines(["worker: pid 1 attempt 1 starting", LONG] + [f"line {i}" for i in range(3)] + [LONG])
    bar = panel.text.horizontalScrollBar()
    assert bar.value() == 0 and bar.maximum() == 0  # wrapped: nothing to scroll sideways to
    panel.add_log_lines([LONG])
    assert bar.value() == 0
    assert panel.text.verticalScrollBar().value() == panel.text.verticalScrollBar().maximum()  # still following


def test_each_message_appears_once_in_the_window(qtbot, make_window, runs_dir):
    run = make_fake_run(runs_dir, state="finished", name="once")
    message = "resumed from the checkpoint at step 2,048"
    record = event(message, "info")
    lines = ["worker: pid 1 attempt 2 resuming", event_echo("info", message), event_echo("warning", "GPU at 88 C"),
             "last line of the log"]
    (run / "worker.log").write_text("\n".join(lines) + "\n")
    (run / "metrics.jsonl").write_text(json.dumps(record) + "\n" + json.dumps(
        {**event("GPU at 88 C", "warning"), "t": time.time()}) + "\n")
    window = make_window()
    window.follow_run(run)
    qtbot.waitUntil(lambda: "last line of the log" in window.log.plain_text() and "GPU at 88 C" in window.log.plain_text(),
                    timeout=10_000)
    text = window.log.plain_text()
    assert text.count(message) == 1 and text.count("GPU at 88 C") == 1
    assert f"event INFO: {message}" in text  # shown as the event, with its time
    assert "worker: pid 1 attempt 2 resuming" in text  # the log's own lines stay


def test_a_notification_names_the_run_once_and_every_line_starts_with_its_local_time(qtbot, runs_dir):
    """Issue 42: 'run X finished: Run X finished: …', and the window's lines had no time (where there is no tray,
    the notification goes to the Log tab)."""
    from datetime import datetime

    from app.notify.tray import TrayIcon
    from core.notify.messages import run_message

    run = make_fake_run(runs_dir, state="finished", exit_reason="reached 10,000 steps")
    panel = LogPanel()
    qtbot.addWidget(panel)
    tray = TrayIcon(panel, available=False)
    tray.fallback.connect(panel.add_notice)
    tray.notify(*run_message(run, "finished"))
    notice = panel.plain_text()
    assert re.fullmatch(rf"\[\d\d:\d\d:\d\d\] \*\*\* run {run.name} finished: reached 10,000 steps\. .+", notice), notice
    assert notice.lower().count(run.name) == 1
    evening = datetime(2026, 3, 1, 21, 4, 5).timestamp()  # local time, as the line shows it
    panel.add_events([{**event("checkpoint saved at step 1,000", "info"), "t": evening}])
    panel.add_line("*** run failed: boom", evening + 60)
    assert panel.plain_text().splitlines()[1:] == ["[21:04:05] event INFO: checkpoint saved at step 1,000",
                                                   "[21:05:05] *** run failed: boom"]
    panel.set_run("another run")  # a notice stays over a change of run, with its time
    assert panel.plain_text() == notice


def test_windows_moving_gpu_memory_to_system_ram_shows_in_the_monitors_log(qtbot, make_window, runs_dir):
    from core.run.sysmem_fallback import CODE, FallbackFinding

    run = make_fake_run(runs_dir, state="running", name="crawling")
    message = FallbackFinding(0.0, 1200.0, 300.0, int(7.85 * 2**30), 8 * 2**30).message(0)
    (run / "metrics.jsonl").write_text(json.dumps({**event(message, "warning", 4096, code=CODE), "t": time.time()}) + "\n")
    (run / "worker.log").write_text(event_echo("warning", message) + "\n")
    window = make_window()
    window.follow_run(run)
    qtbot.waitUntil(lambda: "system RAM" in window.log.plain_text(), timeout=10_000)
    text = window.log.plain_text()
    assert text.count("Windows is moving GPU memory to system RAM") == 1
    assert "event WARNING: Windows is moving GPU memory to system RAM: the run has slowed from 1,200 to 300" in text
    assert "Prefer No Sysmem Fallback" in text
