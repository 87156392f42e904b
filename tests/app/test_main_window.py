"""The main window: re-attach, runs list, stop, close without stopping, persisted layout."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QByteArray, QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from app.runs.rows import COLUMNS as RUN_COLUMNS
from app.runs.rows import ID_ROLE
from app.settings import get_setting
from app.tabs.panel import Panel
from core.run.layout import RunDir
from core.run.status import read_status
from tests.app.fake_runs import append_jsonl, episodes, gpu_lines, make_fake_run, start_fake_worker


def test_window_has_its_tabs_and_shortcuts(make_window):
    window = make_window()
    tabs = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert tabs == ["Monitor", "Runs", "Results", "Queue", "Sweeps", "Log", "System"]
    assert "Ctrl+Return" in [s.toString() for s in window.run_actions.launch_action.shortcuts()]
    assert {"Ctrl+.", "Ctrl+Shift+S"} <= {s.toString() for s in window.run_actions.stop_action.shortcuts()}
    assert not window.run_actions.stop_action.isEnabled()  # nothing to stop


def test_every_tab_is_a_panel_results_reads_the_runs_folder_when_shown_and_stops_its_reader_at_close(
        qtbot, make_window, runs_dir):
    window = make_window()
    window.lazy_tabs.build_all()
    pages = {name: window.lazy_tabs.get(name) for name in window.lazy_tabs.names()}
    assert [name for name, page in pages.items() if not isinstance(page, Panel)] == []
    window.tabs.setCurrentWidget(window.runs)
    run_dir = make_fake_run(runs_dir, state="finished", name="late")  # ended after Results was first built
    window.show_tab("Results")
    assert run_dir.name in window.results.shown_ids()
    thread = window.results.loader.worker.thread
    assert thread.isRunning()
    window.close()
    assert not thread.isRunning()


def test_a_new_window_reattaches_to_a_running_run_and_shows_its_history(qtbot, make_window, runs_dir):
    run_dir = make_fake_run(runs_dir)
    append_jsonl(run_dir / "metrics.jsonl", episodes(0, 500) + [{"kind": "event", "t": 1e9, "level": "info",
                                                                 "message": "checkpoint saved at 1000"}])
    append_jsonl(run_dir / "telemetry.jsonl", gpu_lines(100))
    (run_dir / "worker.log").write_text("worker started\n")
    window = make_window()
    qtbot.waitUntil(lambda: window.run_dir == run_dir, timeout=5000)
    qtbot.waitUntil(lambda: window.monitor.reward_plot.buffer("episode").size == 500, timeout=5000)
    qtbot.waitUntil(lambda: window.run_state == "running", timeout=5000)
    assert window.run_actions.stop_action.isEnabled()
    # telemetry comes in its own batches: on a loaded machine it may land after the status
    qtbot.waitUntil(lambda: window.monitor.gpu.plots["temperature_c"].point_count() == 100, timeout=10_000)
    qtbot.waitUntil(lambda: "checkpoint saved at 1000" in window.log.plain_text(), timeout=5000)
    assert "worker started" in window.log.plain_text()
    assert "does not stop" in window.state_label.text()

    # The first window goes away (controller destroyed); a second one finds the run again.
    window.close()
    append_jsonl(run_dir / "metrics.jsonl", episodes(500, 10))
    again = make_window()
    qtbot.waitUntil(lambda: again.monitor.reward_plot.buffer("episode").size == 510, timeout=5000)
    assert read_status(run_dir).state == "running"  # closing never stopped it
    assert not (run_dir / "STOP").exists()


def test_closing_with_a_running_run_says_it_keeps_going(qtbot, make_window, runs_dir, capsys):
    run_dir = make_fake_run(runs_dir)
    window = make_window()
    qtbot.waitUntil(lambda: window.run_state == "running", timeout=5000)
    window.close()
    assert "keep training" in capsys.readouterr().err
    assert read_status(run_dir).state == "running"


def test_a_window_closed_before_its_runs_are_listed_starts_no_thread_after(make_window, runs_dir):
    """The runs listing answers after the close (a test's next one, or the exit): its re-attach made a follower thread
    that nothing closed, and Qt aborts the process when such a thread is collected while it runs."""
    from app.threads import background

    run_dir = make_fake_run(runs_dir)
    window = make_window()
    window.close()  # before the steps after the first frame: no follower yet
    before = set(background._open_threads)
    window.follow_run(run_dir)  # what the listing's re-attach does
    assert set(background._open_threads) == before and window.run_dir is None


class UrlCatcher(QObject):
    def __init__(self):
        super().__init__()
        self.urls = []

    @Slot(QUrl)
    def catch(self, url: QUrl) -> None:
        self.urls.append(Path(url.toLocalFile()))


def test_runs_tab_shows_a_crashed_run_with_the_end_of_its_log(qtbot, make_window, runs_dir):
    crashed = make_fake_run(runs_dir, state="crashed", name="boom",
                            error={"message": "CUDA out of memory", "traceback": "Traceback: ...\nRuntimeError: OOM"})
    (crashed / "worker.log").write_text("".join(f"line {i}\n" for i in range(40)))
    make_fake_run(runs_dir, state="finished", name="done")
    window = make_window()
    qtbot.waitUntil(lambda: window.runs.tree.topLevelItemCount() == 2, timeout=5000)
    items = [window.runs.tree.topLevelItem(i) for i in range(2)]
    states = {item.data(0, ID_ROLE): item.text(RUN_COLUMNS.index("State")) for item in items}
    assert states[crashed.name] == "crashed"
    assert sorted(item.text(0) for item in items) == ["boom", "done"]  # listed by the names they were given
    window.runs.select(crashed.name)
    text = window.runs.details.toPlainText()
    assert "CUDA out of memory" in text and "line 39" in text and "line 20" not in text
    # no checkpoint: nothing to resume from, so Restart (issue 13, point 8)
    assert not window.runs.resume_button.isEnabled() and window.runs.restart_button.isEnabled()
    assert "Restart" in window.runs.resume_button.toolTip()
    RunDir(crashed).checkpoints.mkdir(exist_ok=True)
    RunDir(crashed).latest_checkpoint.write_text("{}")
    window.runs.refresh()
    qtbot.waitUntil(lambda: window.runs.infos[crashed.name].has_checkpoint, timeout=5000)
    window.runs.select(crashed.name)
    assert window.runs.resume_button.isEnabled()
    finished = next(n for n in states if n != crashed.name)
    window.runs.select(finished)
    assert not window.runs.resume_button.isEnabled()
    # Show folder hands the run's folder to the desktop (Qt's URL handler for file: stands in for it)
    opened = UrlCatcher()
    QDesktopServices.setUrlHandler("file", opened, "catch")
    try:
        qtbot.mouseClick(window.runs.folder_button, Qt.MouseButton.LeftButton)
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert opened.urls == [runs_dir / finished]
    # Double-click opens the run in Monitor + Log.
    item = window.runs.tree.findItems("boom", Qt.MatchFlag.MatchExactly)[0]
    window.runs.tree.itemDoubleClicked.emit(item, 0)
    assert window.run_dir == crashed and window.tabs.currentWidget() is window.monitor
    qtbot.waitUntil(lambda: "line 39" in window.log.plain_text(), timeout=5000)


def test_stop_asks_the_worker_and_says_it_stopped_gracefully(qtbot, make_window, runs_dir):
    run_dir = make_fake_run(runs_dir, state="starting", device="cpu")
    proc = start_fake_worker(run_dir)
    try:
        window = make_window()
        window.follow_run(run_dir)
        qtbot.waitUntil(lambda: window.run_state == "running" and window.monitor.reward_plot.buffer("episode").size > 3,
                        timeout=15000)
        # the title names the device the worker says it trains on (status.json), not the GPU NVML sees
        assert window.monitor.title.text() == f"{run_dir.name}  [running, on cpu]"
        with qtbot.waitSignal(window.follower.stop_finished, timeout=30000) as blocker:
            window.run_actions.stop_action.trigger()
        assert blocker.args == ["graceful"]
        assert "stopped gracefully" in window.statusBar().currentMessage()
        qtbot.waitUntil(lambda: window.run_state == "stopped", timeout=5000)
        assert window.run_actions.resume_action.isEnabled()
        qtbot.waitUntil(lambda: "checkpoint saved" in window.log.plain_text(), timeout=5000)
    finally:
        proc.kill()
        proc.wait()


def test_layout_and_axis_choice_persist(qtbot, make_window):
    window = make_window()
    window.resize(1234, 777)
    window.splitter.setSizes([300, 900])
    window.monitor.set_x_mode("time")
    window.tabs.setCurrentIndex(2)
    splitter, geometry = window.splitter.saveState(), window.saveGeometry()
    window.close()
    # The offscreen screen (800x800) is smaller than the window, so Qt clamps a restored
    # geometry; check what was stored instead of the clamped size.
    avail = window.screen().availableGeometry()
    assert get_setting(f"window/geometry/{avail.width()}x{avail.height()}", QByteArray()) == geometry  # this screen's
    again = make_window()
    assert get_setting(f"window/splitters/{avail.width()}x{avail.height()}", QByteArray()) == splitter  # this screen's
    assert again.tabs.currentIndex() == 2
    assert again.monitor.x_mode.currentData() == "time"


def test_the_window_never_imports_torch(make_window):
    make_window()
    assert "torch" not in sys.modules and "stable_baselines3" not in sys.modules


def test_resuming_a_cluster_run_submits_off_the_gui_thread(qtbot, make_window, runs_dir, monkeypatch):
    """A resume on a Ray cluster is a submission through its job API (seconds): the window stays live."""
    import threading

    import core.launch.control as run_control

    run = make_fake_run(runs_dir, "stopped", ray={"address": "127.0.0.1:8265", "python": "python"})
    calls = []

    def submitting(run_dir):  # where the window calls core.launch.control.resume_run from
        calls.append((Path(run_dir), threading.current_thread() is threading.main_thread()))
        return 1000, 10000

    monkeypatch.setattr(run_control, "resume_run", submitting)
    window = make_window()
    window.run_actions.resume_run(run)
    assert "Ray cluster" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: window.run_dir == run, timeout=10000)  # followed once the submission answered
    assert calls == [(run, False)]


def test_a_terminated_stop_never_promises_a_checkpoint_the_run_does_not_have(qtbot, make_window, runs_dir):
    run_dir = make_fake_run(runs_dir, state="stopped", device="cpu")  # no checkpoint was ever written
    window = make_window()
    window.follow_run(run_dir)
    window.run_actions.stop_finished("terminated")  # what the follower says after a stop that had to kill the worker
    message = window.statusBar().currentMessage()
    assert message == (f"{run_dir.name} did not stop in time and was terminated; it has no checkpoint: "
                       "Restart trains it again from step 0")
