"""The window's notifications: the settings dialog (URLs masked, per-URL events, Send test, a bad
file kept), the tray's menu and tooltip, desktop notifications when a run ends (to the Log tab
where there is no tray, as under offscreen), and the "keep the tray icon" setting."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from PySide6.QtCore import Qt

from app.notify.settings_dialog import KEEP_TRAY_KEY, NotifySettingsDialog
from app.notify.tray import UNAVAILABLE_NOTE, TrayIcon
from app.settings import get_setting, set_setting
from core.notify.settings import load_settings
from core.run.layout import RunDir
from tests.app.fake_runs import make_fake_run
from tests.notify_sink import SECRET, NotifySink


def test_the_dialog_adds_a_url_masked_with_its_own_events_and_sends_a_test(qtbot, user_home):
    dialog = NotifySettingsDialog()
    qtbot.addWidget(dialog)
    with NotifySink() as sink:
        dialog.url_edit.setText(sink.url)
        dialog.add_button.click()
        assert dialog.table.rowCount() == 1
        shown = dialog.table.item(0, 0).text()
        assert shown.startswith("json://***:***@127.0.0.1:") and SECRET not in shown
        finished_col = 1  # EVENTS order: finished first
        dialog.table.item(0, finished_col).setCheckState(Qt.CheckState.Unchecked)
        with qtbot.waitSignal(dialog.tested, timeout=60_000) as got:
            dialog.test_button.click()
        assert [r.ok for r in got.args[0]] == [True]
        assert sink.wait(lambda m: m["title"] == "rlpanel: test notification", timeout=10)
        assert "sent: json://***" in dialog.message.text() and SECRET not in dialog.message.text()
    dialog.keep_tray.setChecked(True)
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    settings = load_settings()
    assert [t.url for t in settings.targets] == [sink.url]
    assert "finished" not in settings.events_of(settings.targets[0]) and "failed" in settings.events_of(settings.targets[0])
    if not sys.platform.startswith("win"):
        assert stat.S_IMODE(os.stat(user_home / "notify.yaml").st_mode) == 0o600
    assert get_setting(KEEP_TRAY_KEY, False) is True


def test_the_dialog_refuses_a_bad_url_and_keeps_a_bad_file(qtbot, user_home):
    dialog = NotifySettingsDialog()
    qtbot.addWidget(dialog)
    dialog.url_edit.setText(f"nosuch://host.example.com/{SECRET}")
    dialog.add_button.click()
    assert dialog.table.rowCount() == 0
    assert "apprise does not know nosuch://host.example.com/***" in dialog.message.text()
    text = "urls:\n  - {url: 'ntfys://ntfy.sh/t', events: [failed, nope]}\n"
    (user_home / "notify.yaml").write_text(text)
    bad = NotifySettingsDialog()
    qtbot.addWidget(bad)
    assert bad.error_label.isVisibleTo(bad) and "urls[0].events" in bad.error_label.text() and "'nope'" in bad.error_label.text()
    assert not bad.table.isEnabled() and not bad.add_button.isEnabled()
    bad.buttons.button(bad.buttons.StandardButton.Save).click()
    assert (user_home / "notify.yaml").read_text() == text, "a file that cannot be read is never overwritten"


def test_the_tray_menu_lists_runs_to_stop_and_the_tooltip_shows_progress(qtbot):
    tray = TrayIcon(available=False)
    tray.set_status(["run-a", "run-b"], "run-a: running, 5,000 of 10,000 steps (50 %)")
    assert tray.tooltip.splitlines() == ["rlpanel: 2 runs going", "run-a: running, 5,000 of 10,000 steps (50 %)"]
    labels = [a.text() for a in tray.menu.actions()]
    assert labels[:2] == ["Open window", "Stop a run"] and labels[-1].startswith("Quit")
    stop = [a for a in tray.stop_menu.actions()]
    assert [a.text() for a in stop] == ["run-a", "run-b"]
    with qtbot.waitSignal(tray.stop_requested) as got:
        stop[1].trigger()
    assert got.args == ["run-b"]
    tray.set_status([], None)
    assert [a.text() for a in tray.stop_menu.actions()] == ["No run is training"]
    with qtbot.waitSignal(tray.fallback) as line:
        tray.notify("rlpanel: run x failed", "Run x failed: boom\nIt got to step 5.")
    assert line.args == ["*** run x failed: boom. It got to step 5."]  # the run named once


def test_without_a_tray_the_window_says_so_once_and_run_ends_go_to_the_log(qtbot, make_window, runs_dir):
    run = make_fake_run(runs_dir, "running")
    window = make_window()
    assert not window.notifier.tray.available  # offscreen has no tray
    qtbot.waitUntil(lambda: window.notifier.watcher.states is not None, timeout=30_000)
    assert window.log.plain_text().count(UNAVAILABLE_NOTE) == 1
    qtbot.waitUntil(lambda: run.name in window.notifier.tray.tooltip, timeout=30_000)
    assert window.notifier.tray.tooltip.startswith("rlpanel: 1 run going")
    status = json.loads(RunDir(run).status.read_text())
    status.update(state="finished", exit_reason="reached 10,000 steps")
    RunDir(run).status.write_text(json.dumps(status))
    RunDir(run).summary.write_text(json.dumps({"final_mean_reward": 187.25, "final_window": 100, "timesteps": 10000,
                                               "wall_time_s": 65.0}))
    window.runs.refresh()
    qtbot.waitUntil(lambda: f"run {run.name} finished" in window.log.plain_text(), timeout=30_000)
    title, body = window.notifier.shown[-1]
    assert title == f"rlpanel: run {run.name} finished"
    assert "reached 10,000 steps" in body and "Final reward 187.2" in body
    window.runs.refresh()  # no second notification for the same end
    qtbot.wait(300)
    assert len(window.notifier.shown) == 1


def test_stop_from_the_tray_asks_the_run_to_stop(qtbot, make_window, runs_dir):
    run = make_fake_run(runs_dir, "running")
    window = make_window()
    window.notifier.stop(run.name)
    assert RunDir(run).stop_request.read_text().startswith("requested from the tray")


@pytest.mark.parametrize("keep", [True, False])
def test_closing_keeps_the_tray_icon_when_the_setting_says_so(qtbot, runs_dir, keep):
    from app.main_window import MainWindow

    set_setting(KEEP_TRAY_KEY, keep)
    window = MainWindow(runs_dir, confirm_close=False, tray=False)
    qtbot.addWidget(window)
    window.notifier.tray.available = True  # the logic, without a real icon (offscreen has no tray to put one in)
    window.show()
    window.close()
    assert window.isHidden()
    assert window.notifier.in_tray is keep
    if keep:
        assert window.notifier.shown[-1][0] == "rlpanel is still here"
        window.notifier.quitting = True
        window.close()


def test_a_queue_that_ends_is_a_desktop_notification(qtbot, make_window, runs_dir):
    from core.queue.plan import parse_plan
    from core.queue.state import new_state, write_queue
    from core.util.procs import process_identity

    plan = parse_plan({"jobs": [{"name": "sac", "algo": "SAC", "env": "Pendulum-v1", "timesteps": 1000},
                                {"name": "ppo", "algo": "PPO", "env": "CartPole-v1", "timesteps": 1000}]})
    state = new_state(plan, "plan.yaml")
    state.id, state.runner = "20261125-2200", process_identity()
    state.jobs[0].status = "running"
    write_queue(runs_dir, state)
    window = make_window()
    qtbot.waitUntil(lambda: window.notifier.watcher.queue_state == "running", timeout=30_000)
    state.state = "finished with failures"
    state.jobs[0].status, state.jobs[0].reason = "failed", "out of GPU memory"
    state.jobs[1].status = "finished"
    write_queue(runs_dir, state)
    window.runs.refresh()
    qtbot.waitUntil(lambda: "queue 20261125-2200" in window.log.plain_text(), timeout=30_000)
    title, body = window.notifier.shown[-1]
    assert title == "rlpanel: queue 20261125-2200 finished with failures"
    assert "2 jobs: 1 failed, 1 finished" in body and "sac (no run) failed: out of GPU memory" in body
