"""What the plots draw is what happened (issue 13): a long reward series as one band, a gap where
the run did not run, one point visible, the crosshair gone when the mouse is, units, thresholds.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from app.monitor.panel import MonitorPanel
from app.plots.live_plot import LivePlot
from app.plots.series_items import MAX_SYMBOLS
from app.plots.smoothing import Ema
from tests.app.fake_runs import gpu_lines


def make_panel(qtbot) -> MonitorPanel:
    panel = MonitorPanel()
    qtbot.addWidget(panel)
    panel.resize(1200, 900)
    panel.show()
    return panel


def noisy_episodes(n: int, seed: int = 3, t0: float = 1e9) -> list[dict]:
    """One band of rewards around 200 (a unimodal policy), 10 steps apart."""
    rewards = np.random.default_rng(seed).normal(200.0, 30.0, n)
    return [{"kind": "episode", "step": 10 * i, "t": t0 + i, "reward": float(r), "length": 10} for i, r in enumerate(rewards)]


def filled_columns(lo: np.ndarray, hi: np.ndarray, level: float) -> float:
    """The share of the band's columns (NaN breaks left out) that cover ``level``."""
    keep = np.isfinite(lo) & np.isfinite(hi)
    return float(np.mean((lo[keep] <= level) & (hi[keep] >= level)))


def test_point_1_a_long_noisy_run_is_one_band_with_no_gap_at_its_mean(qtbot):
    panel = make_panel(qtbot)
    plot = panel.reward_plot
    panel.add_records(noisy_episodes(10_000))
    qtbot.waitUntil(lambda: plot.band_shown("episode"), timeout=5000)
    _, lo, hi = plot.band_data("episode")
    # every column of the band covers the mean: no gap along it (min/max points alone drew two bands)
    assert filled_columns(lo, hi, 200.0) == 1.0
    assert np.nanmin(lo) == min(r["reward"] for r in noisy_episodes(10_000))
    assert "episodes, min-max" in plot.legend_names()
    # zoomed in to a few hundred episodes, the raw episodes are drawn, and the band goes
    plot.getPlotItem().vb.setXRange(50_000, 53_000, padding=0)
    qtbot.waitUntil(lambda: not plot.band_shown("episode"), timeout=5000)
    x, y = plot.curve("episode").getOriginalDataset()
    inside = (x >= 50_000) & (x <= 53_000)
    assert 290 <= inside.sum() <= MAX_SYMBOLS and np.all(np.diff(x[inside]) == 10)


def test_point_4_a_stop_and_resume_breaks_every_line_and_the_band(qtbot):
    panel = make_panel(qtbot)
    first = [{"kind": "progress", "step": 100 * i, "t": 1e9 + i, "fps": 500.0, "total": 10**6} for i in range(50)]
    second = [{"kind": "progress", "step": 100 * i, "t": 1e9 + 3600 + i, "fps": 800.0, "total": 10**6} for i in range(50, 100)]
    train = [{"kind": "train", "step": 100 * i, "t": 1e9 + i, "train/value_loss": 1.0} for i in (10, 20, 60, 70)]
    panel.add_records(first + train[:2] + [{"kind": "attempt", "t": 1e9 + 3600, "attempt": 2}] + second + train[2:])
    speed = panel.speed_plot
    qtbot.waitUntil(lambda: speed.curve("fps").getOriginalDataset()[0] is not None, timeout=3000)
    x, y = speed.curve("fps").getOriginalDataset()
    gap = np.flatnonzero(~np.isfinite(y))
    assert len(gap) == 1 and x[gap[0] - 1] == 4900 and x[gap[0] + 1] == 5000  # no line from 4,900 to 5,000
    loss = panel.scalars.charts["train/value_loss"]
    qtbot.waitUntil(lambda: loss.curve("value").getOriginalDataset()[1] is not None, timeout=3000)
    assert np.isnan(loss.curve("value").getOriginalDataset()[1]).sum() == 1
    # a long reward series breaks its band at the same place
    plot = panel.reward_plot
    plot.reset()
    plot.add_columns(_columns(noisy_episodes(6000)), None)
    plot.mark_break()
    plot.add_columns(_columns(noisy_episodes(6000, seed=4)[:0] + [
        {"step": 60_000 + 10 * i, "t": 2e9 + i, "reward": 200.0} for i in range(6000)]), None)
    qtbot.waitUntil(lambda: plot.band_shown("episode"), timeout=5000)
    bx, lo, _ = plot.band_data("episode")
    assert np.isnan(lo).sum() == 1
    # the rolling mean breaks there too
    mx, my = plot.curve("mean").getOriginalDataset()
    assert np.isnan(my).sum() == 1
    # on wall time the band's break is no point at x=0: the axis spans the run, not 1970 to now
    plot.set_x_mode("time")
    for _ in range(3):
        plot.refresh()
        plot.grab()
        qtbot.wait(20)
    left, right = plot.getPlotItem().vb.viewRange()[0]
    assert left > 0.9e9 and right < 2.1e9  # the data spans 1e9 .. 2e9 + 6,000 s


def _columns(records: list[dict]):
    return (np.array([r["step"] for r in records], float), np.array([r["t"] for r in records], float),
            np.array([r["reward"] for r in records], float))


def test_point_3_the_crosshair_hides_when_the_mouse_leaves_and_on_another_run(qtbot):
    panel = make_panel(qtbot)
    plot = panel.reward_plot
    panel.add_records(noisy_episodes(50))
    qtbot.waitUntil(lambda: plot.curve("episode").getOriginalDataset()[0] is not None, timeout=3000)
    plot.crosshair.show_at(200.0)
    assert plot.crosshair.visible()
    QApplication.sendEvent(plot, _leave())
    assert not plot.crosshair.visible()
    plot.crosshair.show_at(200.0)
    panel.set_run(None, "another run")
    assert not plot.crosshair.visible()


def _leave():
    from PySide6.QtCore import QEvent

    return QEvent(QEvent.Type.Leave)


def test_point_3_a_mouse_move_over_the_plot_shows_the_readout_with_units(qtbot):
    plot = LivePlot("GPU power", "W", unit="W", time_only=False)
    qtbot.addWidget(plot)
    plot.resize(600, 300)
    plot.show()
    buf = plot.add_series("p", "GPU 0", "#3d8ee8")
    buf.extend(np.arange(10.0) * 100, np.arange(10.0), np.full(10, 61.5))
    plot.refresh()
    qtbot.waitExposed(plot)
    centre = plot.getPlotItem().vb.sceneBoundingRect().center()
    pos = plot.mapFromScene(centre)
    move = QMouseEvent(QMouseEvent.Type.MouseMove, QPointF(pos), QPointF(plot.mapToGlobal(pos)), Qt.MouseButton.NoButton,
                       Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(plot.viewport(), move)
    qtbot.waitUntil(plot.crosshair.visible, timeout=3000)
    assert "GPU 0: 61.5 W" in plot.crosshair.label.text()


def test_point_11_one_point_is_drawn_and_the_first_seconds_have_a_sane_axis(qtbot):
    panel = make_panel(qtbot)
    panel.add_records([{"kind": "progress", "step": 27, "t": 1e9, "fps": 300.0, "total": 10**5}])
    speed = panel.speed_plot
    qtbot.waitUntil(lambda: speed.dots("fps").getOriginalDataset()[0] is not None, timeout=3000)
    x, y = speed.dots("fps").getOriginalDataset()
    assert list(x) == [27] and list(y) == [300.0]  # a lone point is a dot (a line of one point is invisible)
    for _ in range(3):
        speed.grab()
        qtbot.wait(20)
    left, right = speed.getPlotItem().vb.viewRange()[0]
    assert right - left >= 1000  # not "27.000 28.000"


def test_point_11_gpu_plots_read_against_their_limits_and_name_what_is_past_them(qtbot):
    panel = make_panel(qtbot)
    lines = gpu_lines(10)
    for line in lines:
        line.update(temperature_c=96, temperature_slowdown_c=100, utilization_pct=40, power_w=147.0, power_limit_w=150.0,
                    memory_used_bytes=int(0.97 * 8 * 2**30))
    panel.add_telemetry(lines)
    temp = panel.gpu.plots["temperature_c"]
    util = panel.gpu.plots["utilization_pct"]
    for _ in range(3):
        panel.redraw()
        temp.grab()
        qtbot.wait(20)
    assert util.getPlotItem().vb.viewRange()[1] == [0, 100]  # 40 % reads as 40 %, not as the top of the axis
    low, high = temp.getPlotItem().vb.viewRange()[1]
    assert low == 0 and high >= 100  # 96 °C reads near the top, beside the slowdown line
    assert panel.gpu.slowdown_line.isVisible() and panel.gpu.slowdown_line.value() == 100
    assert panel.gpu.power_limit_line.isVisible() and panel.gpu.power_limit_line.value() == 150
    alerts = " ".join(panel.alerts())
    assert "96" in alerts and "97" in alerts and "98" in alerts
    assert panel.status.isVisible() and "96" in panel.status.text()
    qtbot.waitUntil(lambda: temp.alert_curve("gpu0") is not None, timeout=3000)
    assert np.nanmin(temp.alert_curve("gpu0").getOriginalDataset()[1]) == 96  # drawn in the alert colour
    assert "°C" in temp.readout_at(lines[0]["t"])


def test_point_11_the_two_memory_lines_have_distinct_colours(qtbot):
    panel = make_panel(qtbot)
    panel.add_telemetry(gpu_lines(3))
    mem = panel.gpu.plots["memory_used_bytes"]
    card, run = (mem.curve(k).opts["pen"].color() for k in ("gpu0", "proc0"))
    distance = sum((a - b) ** 2 for a, b in zip(card.getRgb()[:3], run.getRgb()[:3], strict=True)) ** 0.5
    assert distance > 100


def test_smoothing_is_tensorboards_debiased_ema_and_skips_missing_values():
    ema = Ema(0.6)
    out = ema(np.array([1.0, np.nan, 3.0]), 0)
    assert out[0] == 1.0 and np.isnan(out[1])
    assert np.isclose(out[2], (0.4 * 0.6 * 1 + 0.4 * 3) / (1 - 0.36))
    more = ema(np.array([1.0, np.nan, 3.0, 5.0]), 3)  # only the new value, from the kept average
    assert np.isclose(more[0], Ema(0.6)(np.array([1.0, 3.0, 5.0]), 0)[-1])
    assert list(Ema(0.0)(np.array([2.0, 4.0]), 0)) == [2.0, 4.0]


def test_the_smoothing_slider_draws_the_ema_over_the_faded_raw_curves(qtbot):
    panel = make_panel(qtbot)
    train = [{"kind": "train", "step": 100 * i, "t": 1e9 + i, "train/value_loss": float(i % 2)} for i in range(40)]
    panel.add_records(noisy_episodes(60) + train)
    panel.smoothing.setValue(900)
    assert panel.smoothing_label.text() == "0.9"
    loss = panel.scalars.charts["train/value_loss"]
    smooth = [k for k in loss.series_keys() if k.endswith("~smooth")]
    assert smooth and any(k.endswith("~smooth") for k in panel.reward_plot.series_keys())
    qtbot.waitUntil(lambda: loss.curve(smooth[0]).getOriginalDataset()[1] is not None, timeout=3000)
    y = loss.curve(smooth[0]).getOriginalDataset()[1]
    assert 0.3 < y[-1] < 0.7  # the 0/1 zigzag smoothed towards its mean
    panel.smoothing.setValue(0)
    assert not any(k.endswith("~smooth") for k in loss.series_keys())
    panel.log_y.setChecked(True)
    assert loss.getPlotItem().ctrl.logYCheck.isChecked()
