"""Issue 26: the Watch window shows the agent's frames at the env's rate and stops cleanly (its player gone, its
reader thread ended); pause holds it; an env that draws nothing says why in the window; Record… writes a video."""

from __future__ import annotations

import psutil
import pytest
from PIL import Image

from app.agent.record_dialog import RecordDialog
from app.agent.watch_window import WatchWindow
from tests.core.agent.agent_runs import NO_FRAMES_ENTRY, no_frames_copy
from tests.training_helpers import copy_run

pytestmark = [pytest.mark.gui, pytest.mark.training]

START_MS = 90_000  # the player loads torch, SB3 and the checkpoint first: seconds on a busy CI machine


@pytest.fixture(scope="module")
def agent_run(trained_run, tmp_path_factory):
    return copy_run(trained_run, tmp_path_factory.mktemp("agent_runs"))


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_watch_shows_frames_pauses_and_stops_cleanly(qtbot, agent_run):
    window = WatchWindow(agent_run)
    qtbot.addWidget(window)
    window.resize(700, 520)
    window.show()
    qtbot.waitUntil(lambda: window.frames_shown >= 20, timeout=START_MS)
    pixmap = window.view.pixmap()
    assert not pixmap.isNull() and window.last_frame is not None
    assert (window.last_frame.width, window.last_frame.height, window.last_frame.fps) == (600, 400, 50.0)
    assert abs(pixmap.width() / pixmap.height() - 1.5) < 0.02, "scaled to fit with CartPole's 3:2 kept"
    assert pixmap.width() <= window.view.width() and pixmap.height() <= window.view.height()
    assert window.status.text().startswith(f"Episode {window.last_frame.episode}   step {window.last_frame.step:,}")
    # paced at the env's 50 fps: a second brings at most about 50 frames, never the hundreds the player could make
    before = window.frames_shown
    qtbot.wait(1000)
    assert 5 <= window.frames_shown - before <= 60
    window.pause_button.click()
    qtbot.wait(150)  # a frame already on its way may still land
    held = window.frames_shown
    qtbot.wait(500)
    assert window.frames_shown == held and window.pause_button.text() == "Play"
    window.pause_button.click()
    qtbot.waitUntil(lambda: window.frames_shown > held + 5, timeout=5000)

    pid, thread = window.proc.pid, window.reader_thread.thread
    window.close()
    assert window.proc is None and gone(pid)
    assert thread.isFinished()


def test_watch_says_in_the_window_why_an_env_cannot_be_watched(qtbot, trained_run, tmp_path):
    run = no_frames_copy(trained_run, tmp_path / "runs")
    window = WatchWindow(run)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "cannot render frames" in window.view.text(), timeout=START_MS)
    assert window.view.text().startswith(f"{NO_FRAMES_ENTRY} cannot render frames: render() gave no picture")
    assert window.frames_shown == 0 and not window.pause_button.isEnabled()
    assert window.status.text() == "This env draws no frames here: no checkpoint can be watched."  # not "Restart to try again"
    window.close()


def test_record_dialog_writes_the_video(qtbot, agent_run, tmp_path):
    dialog = RecordDialog(agent_run)
    qtbot.addWidget(dialog)
    assert dialog.picker.value() == "last" and dialog.picker.count() == 3  # last, then the two older steps
    dialog.file_edit.setText(str(tmp_path / "agent.avi"))
    dialog.record_button.click()
    assert "must end in .mp4 or .gif" in dialog.message.text() and not dialog.busy
    video = tmp_path / "agent.gif"
    dialog.file_edit.setText(str(video))
    dialog.picker.setCurrentIndex(dialog.picker.findData("512"))
    dialog.record_button.click()
    assert dialog.busy and not dialog.record_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=START_MS)
    assert dialog.error == "" and dialog.recorded is not None, dialog.error
    assert dialog.recorded["checkpoint_step"] == 512 and Image.open(video).size == (600, 400)
    assert dialog.message.text().startswith(f"Recorded {dialog.recorded['frames']:,} frames")
    assert dialog.open_button.isEnabled()


def test_the_runs_tab_agent_menu_opens_watch_and_record_for_the_selected_run(qtbot, trained_run, runs_dir):
    from app.runs.panel import RunsPanel

    run = copy_run(trained_run, runs_dir)
    panel = RunsPanel(runs_dir)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 1 and not panel._busy, timeout=10_000)
    panel.select(run.name)
    assert panel.agent_button.isEnabled()
    actions = {a.text(): a for a in panel.agent_button.menu().actions()}
    assert {"Watch", "Record…"} <= set(actions)
    actions["Record…"].trigger()  # Watch starts a player: the tests above drive its window
    assert isinstance(panel.agent_window, RecordDialog) and panel.agent_window.run_dir == run
    assert panel.agent_window.isVisible()
    panel.agent_window.close()
