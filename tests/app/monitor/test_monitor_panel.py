"""The Monitor tab shows the followed run only (issue 13): its own charts and legends, a steady
ETA only while it runs, the live GPU monitor back when no run is followed, a long run loaded
without blocking the window.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QObject

import app.monitor.panel as panel_module
from app.monitor.follower import RunFollower
from app.monitor.panel import MonitorPanel
from tests.app.fake_runs import append_jsonl, episodes, gpu_lines, make_fake_run


def make_panel(qtbot) -> MonitorPanel:
    panel = MonitorPanel()
    qtbot.addWidget(panel)
    panel.resize(1200, 900)
    panel.show()
    return panel


def sac_train(n: int) -> list[dict]:
    return [{"kind": "train", "step": 100 * i, "t": 1e9 + i, "train/actor_loss": -1.0, "train/critic_loss": 0.5,
             "train/ent_coef": 0.1} for i in range(n)]


def ppo_train(n: int) -> list[dict]:
    return [{"kind": "train", "step": 2048 * i, "t": 1e9 + i, "train/value_loss": 3.0, "train/policy_gradient_loss": -0.01,
             "train/approx_kl": 0.01, "train/clip_fraction": 0.1} for i in range(n)]


def test_point_2_another_run_brings_its_own_charts_and_legends(qtbot, make_window, runs_dir):
    sac = make_fake_run(runs_dir, state="stopped", name="sac")
    ppo = make_fake_run(runs_dir, state="stopped", name="ppo")
    append_jsonl(sac / "metrics.jsonl", sac_train(5))
    append_jsonl(ppo / "metrics.jsonl", ppo_train(5))
    window = make_window()
    window.follow_run(sac)
    charts = window.monitor.scalars.charts
    qtbot.waitUntil(lambda: "train/actor_loss" in window.monitor.scalars.charts, timeout=5000)
    window.monitor.reward_plot.crosshair.show_at(100.0)
    window.follow_run(ppo)
    qtbot.waitUntil(lambda: "train/value_loss" in window.monitor.scalars.charts, timeout=5000)
    charts = window.monitor.scalars.charts
    assert set(charts) == {"train/value_loss", "train/policy_gradient_loss", "train/approx_kl", "train/clip_fraction"}
    for key, chart in charts.items():  # one chart per scalar, titled by it, holding that run's points only
        assert chart.title == key and chart.buffer("value").size == 5
    assert not window.monitor.reward_plot.crosshair.visible()  # the readout of the previous run went with it


def test_point_5_the_eta_is_steady_and_only_shown_while_the_run_runs(qtbot):
    panel = make_panel(qtbot)
    panel.set_run_state("running")
    # 1,000 steps/s for two minutes, then one slow second (an evaluation), then fast again
    records = [{"kind": "progress", "step": 1000 * i, "t": 1e9 + i, "fps": 1000.0, "total": 400_000} for i in range(120)]
    panel.add_records(records)
    first = panel.progress.format()
    # (the day is named when the end falls on another day: a test run at 23:57 ends "done at Thu 00:02")
    assert re.fullmatch(r"119,000 / 400,000 steps · 4:4\d left, done at (\w{3} )?\d\d:\d\d", first), first
    panel.add_records([{"kind": "progress", "step": 119_100, "t": 1e9 + 121, "fps": 100.0, "total": 400_000}])
    minutes = int(re.search(r"(\d+):\d\d left", panel.progress.format()).group(1))
    assert minutes == 4  # the last second's 100 steps/s would say 46 minutes
    for state in ("crashed", "stopped", "finished"):
        panel.set_run_state(state)
        assert "left" not in panel.progress.format() and state in panel.progress.format()
    # an update past the total (ARS's episodes; a run recorded before the total was the planned steps): the bar is
    # full, and the total is never below the steps made
    panel.add_records([{"kind": "progress", "step": 402_048, "t": 1e9 + 500, "fps": 1000.0, "total": 400_000}])
    assert panel.progress.value() == panel.progress.maximum()
    assert panel.progress.format().startswith("402,048 / 402,048 steps")
    assert "402,048 steps were taken, past the 400,000 planned" in panel.progress.toolTip()


def test_point_9_the_live_gpu_monitor_comes_back_when_no_run_is_followed(qtbot, make_window, runs_dir):
    run = make_fake_run(runs_dir, state="stopped")
    window = make_window()
    temperature = window.monitor.gpu.plots["temperature_c"]
    window.gpu_monitor.samples.emit(gpu_lines(3))
    assert temperature.point_count() == 3
    window.open_run(run)
    assert temperature.point_count() == 0
    window.gpu_monitor.samples.emit(gpu_lines(3))
    assert temperature.point_count() == 0  # the followed run's telemetry only
    assert window.monitor.close_button.isVisible()
    window.monitor.close_button.click()
    assert window.run_dir is None and not window.monitor.close_button.isVisible()
    window.gpu_monitor.samples.emit(gpu_lines(4))
    assert temperature.point_count() == 4
    assert "live GPU monitor" in window.monitor.title.text()


def test_point_10_a_long_history_loads_in_chunks_while_the_window_stays_responsive(qtbot, runs_dir):
    run = make_fake_run(runs_dir, state="stopped")
    append_jsonl(run / "metrics.jsonl", episodes(0, 20_000))
    append_jsonl(run / "telemetry.jsonl", gpu_lines(5_000))
    panel = make_panel(qtbot)
    follower = RunFollower(poll_ms=50, chunk_bytes=64 * 1024)
    shares: list[float] = []
    batches: list[int] = []
    ticks: list[int] = []

    def on_records(batch):
        batches.append(batch.records)
        panel.add_batch(batch)

    follower.records.connect(on_records)
    follower.telemetry.connect(panel.add_telemetry_batch)
    follower.loading.connect(shares.append)
    from PySide6.QtCore import QTimer

    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))  # the GUI thread's event loop keeps running meanwhile
    timer.start(10)
    try:
        follower.follow(run)
        qtbot.waitUntil(lambda: panel.reward_plot.buffer("episode").size == 20_000, timeout=30_000)
        qtbot.waitUntil(lambda: shares and shares[-1] == -1.0, timeout=10_000)
    finally:
        timer.stop()
        follower.close()
    assert len(batches) > 5 and max(batches) < 2_000  # in chunks of 64 KiB, not one 20,000-record batch
    assert any(0 < s < 1 for s in shares)  # "Loading the run's history… n %" was shown
    # never a pile of batches queued in the GUI thread: at most one tick's (metrics and telemetry)
    assert follower.controller.most_unacked <= 2
    assert ticks  # the GUI thread's event loop ran meanwhile
    assert panel.gpu.plots["temperature_c"].point_count() == 5_000


class PaintCount(QObject):
    """Paint events of the plots' viewports (what drawing a plot on screen costs); ``while_held``: those painted while
    the panel held its plots."""

    def __init__(self, plots, panel=None):
        super().__init__()
        self.viewports = {plot.viewport(): plot for plot in plots}
        self.painted: list = []
        self.while_held: list = []
        self.panel = panel
        for viewport in self.viewports:
            viewport.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Paint:
            self.painted.append(self.viewports[obj])
            if self.panel is not None and self.panel.held:
                self.while_held.append(self.viewports[obj])
        return False


def test_a_run_opened_is_painted_once_with_its_whole_history_not_once_per_batch(qtbot, runs_dir, monkeypatch):
    monkeypatch.setattr(panel_module, "HOLD_S", 30.0)  # the history decides when the plots show, not the machine's speed
    monkeypatch.setattr(panel_module, "HOLD_FIRST_S", 30.0)
    run = make_fake_run(runs_dir, state="stopped")
    append_jsonl(run / "metrics.jsonl", episodes(0, 6_000))
    append_jsonl(run / "telemetry.jsonl", gpu_lines(3_000))
    panel = make_panel(qtbot)
    qtbot.waitExposed(panel)
    follower = RunFollower(poll_ms=50, chunk_bytes=32 * 1024)
    batches: list[int] = []
    held: list[bool] = []  # whether the plots were held as each batch came
    follower.records.connect(lambda batch: (batches.append(batch.records), held.append(panel.held), panel.add_batch(batch)))
    follower.telemetry.connect(panel.add_telemetry_batch)
    follower.loading.connect(lambda share: panel.set_loading(share if share >= 0 else None))
    reward = panel.reward_plot
    painted = PaintCount([reward, panel.gpu.plots["temperature_c"]], panel)
    try:
        panel.set_run(run, "a long run")
        follower.follow(run)
        qtbot.waitUntil(lambda: reward.buffer("episode").size == 6_000, timeout=30_000)
        # batch after batch came while the plots were held, and none was drawn meanwhile (the hold may end as soon as
        # the last batch is in: a loaded machine's test looked after that, so it is judged per batch and per paint)
        assert held and all(held), held
        assert painted.while_held == []
        qtbot.waitUntil(lambda: not panel.loading and not panel.held, timeout=10_000)
        assert panel.splitter.updatesEnabled()
        qtbot.waitUntil(lambda: len(set(painted.painted)) == 2, timeout=5_000)
        qtbot.wait(200)
    finally:
        follower.close()
    assert len(batches) > 5  # the history came in many batches
    # ... and was painted once it was all in (then again as pyqtgraph sizes its axes for the tick labels it first drew,
    # and fits the view to the new width: ~10 paints while the batches came before the hold)
    assert painted.painted.count(reward) <= 4
    assert len(reward.curve("mean").getOriginalDataset()[0]) > 0  # drawn with the history


def test_a_run_without_a_loading_signal_is_shown_after_the_hold(qtbot, runs_dir, monkeypatch):
    monkeypatch.setattr(panel_module, "HOLD_FIRST_S", 0.3)
    panel = make_panel(qtbot)
    panel.set_run(make_fake_run(runs_dir, state="stopped"), "a run")
    assert panel.held and not panel.splitter.updatesEnabled()
    qtbot.waitUntil(lambda: not panel.held, timeout=5_000)  # HOLD_FIRST_S: a reader that never says a word
    assert panel.splitter.updatesEnabled()
    panel.set_run(None, "no run")
    assert not panel.held  # the live GPU monitor is never held


def test_the_loading_state_is_shown_in_the_header_and_cleared(qtbot):
    panel = make_panel(qtbot)
    plots_at = panel.splitter.geometry()
    panel.set_loading(0.4)
    assert panel.loading and panel.progress.isVisible() and panel.progress.format() == "Loading the run's history… 40 %"
    assert panel.progress.value() == 400 and not panel.status.isVisible()
    panel.set_loading(None)
    assert not panel.loading and not panel.progress.isVisible()  # no progress record yet: nothing to show
    assert panel.splitter.geometry() == plots_at  # nothing above the plots moved: they were not laid out again


def test_save_plots_starts_in_the_runs_folder(qtbot, runs_dir, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    run = make_fake_run(runs_dir, state="stopped")
    panel = make_panel(qtbot)
    panel.set_run(run, run.name)
    offered = []

    def fake_dialog(parent, caption, start, filters):
        offered.append(start)
        return str(run / "plots"), filters

    monkeypatch.setattr(QFileDialog, "getSaveFileName", fake_dialog)
    path = panel.save_plots()
    assert offered == [str(run / "monitor.png")]
    assert path == run / "plots.png" and path.stat().st_size > 1000
