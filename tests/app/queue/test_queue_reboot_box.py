"""The Queue tab's "Resume after a restart": the box reaches start_queue, the view says where the entry is."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.queue.panel import survive_reboot_box
from core.queue.autostart import Host
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

    qtbot.waitUntil(lambda: ended(panel) and not entry.exists() and panel.refresh() is None
                    and "resumes after a restart" not in panel.status_view.header.text(), timeout=TIMEOUT_MS)
    assert panel.state.state == "finished" and panel.state.survive_reboot is None  # the runner removed it at the end


def test_the_box_says_what_it_makes_on_each_system(qtbot):
    windows, mac = survive_reboot_box(Host(platform="win32", env={})), survive_reboot_box(Host(platform="darwin", env={}))
    qtbot.addWidget(windows)
    qtbot.addWidget(mac)
    assert windows.isEnabled() and "Task Scheduler task at log-on" in windows.toolTip() and "Startup folder" in windows.toolTip()
    assert not mac.isEnabled() and "Not supported on macOS" in mac.toolTip()
