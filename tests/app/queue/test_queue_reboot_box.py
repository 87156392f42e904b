"""The Queue tab's "Resume after a restart": the box reaches start_queue, the view says where the entry is."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.queue.panel import survive_reboot_box
from core.queue.autostart import Host, register, remove
from core.queue.state import new_state, write_queue
from tests.app.queue.test_queue_panel import TIMEOUT_MS, ended, make_panel, tiny_plan


@pytest.mark.training
def test_the_box_registers_the_startup_entry_and_the_view_says_where(qtbot, runs_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    panel = make_panel(qtbot, runs_dir)
    panel.editor.set_plan(tiny_plan("only"))
    assert not panel.survive_reboot.isChecked() and "XDG autostart entry" in panel.survive_reboot.toolTip()
    panel.survive_reboot.setChecked(True)
    with qtbot.waitSignal(panel.queue_started, timeout=10_000) as started:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert panel.errors() == []
    [entry] = (tmp_path / "xdg" / "autostart").iterdir()
    assert started.args[0].survive_reboot.where == str(entry)
    assert f"resumes after a restart: the autostart entry {entry}" in panel.start_note.text()
    panel.refresh()
    assert f"resumes after a restart: the autostart entry {entry}" in panel.status_view.header.text()

    # the runner writes the ended state, then removes the entry, then forgets it in the state: wait for all three
    qtbot.waitUntil(lambda: ended(panel) and not entry.exists() and panel.state.survive_reboot is None
                    and "resumes after a restart" not in panel.status_view.header.text(), timeout=TIMEOUT_MS)
    assert panel.state.state == "finished"


def test_the_box_says_what_it_makes_on_each_system(qtbot):
    windows, mac = survive_reboot_box(Host(platform="win32", env={})), survive_reboot_box(Host(platform="darwin", env={}))
    qtbot.addWidget(windows)
    qtbot.addWidget(mac)
    assert windows.isEnabled() and "Task Scheduler task at log-on" in windows.toolTip() and "Startup folder" in windows.toolTip()
    assert not mac.isEnabled() and "Not supported on macOS" in mac.toolTip()


def test_the_view_stops_saying_the_queue_resumes_after_a_restart_once_the_entry_is_gone(qtbot, runs_dir, tmp_path,
                                                                                        monkeypatch):
    """Issue 42: 'resumes after a restart: the autostart entry …' stayed after the entry was removed."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    state = new_state(tiny_plan("only"), str(runs_dir / "plan.yaml"))
    state.launched_at = 0  # long ago, and no runner holds the queue's lock: it reads as crashed, which the entry resumes
    state.survive_reboot = register(runs_dir, state.id, Host(platform="linux"))
    write_queue(runs_dir, state)
    entry = Path(state.survive_reboot.where)
    panel = make_panel(qtbot, runs_dir)
    assert f"resumes after a restart: the autostart entry {entry}" in panel.status_view.header.text()
    assert remove(runs_dir, Host(platform="linux")) == [str(entry)]  # removed by hand, as rlpanel queue resume would
    panel.refresh()
    assert panel.state.survive_reboot is not None  # the state still names it...
    assert "resumes after a restart" not in panel.status_view.header.text()  # ...the view does not
    register(runs_dir, state.id, Host(platform="linux"))
    state.state = "cancelled"  # an ended queue's entry removes itself at the next log-in: it resumes nothing
    write_queue(runs_dir, state)
    panel.refresh()
    assert entry.exists() and "resumes after a restart" not in panel.status_view.header.text()
