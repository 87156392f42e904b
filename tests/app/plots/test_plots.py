"""Live plots: points arrive, GPU plots say why they have no data instead of drawing zeros."""

from __future__ import annotations

import re

import numpy as np
from PySide6.QtGui import QColor

from app.monitor.panel import MonitorPanel
from app.plots.buffers import SeriesBuffer, envelope_indices, rolling_mean, rolling_mean_from
from app.plots.reward_plot import ROLLING_WINDOW
from app.plots.series_items import MAX_SYMBOLS
from core.estimate.result import FitEstimate
from tests.app.fake_runs import episodes, gpu_lines


def test_series_buffer_grows_by_doubling_and_keeps_every_point():
    buf = SeriesBuffer(capacity=4)
    for i in range(10):
        buf.append(i, 100 + i, i * 2)
    buf.extend(range(10, 20), range(110, 120), range(20, 40, 2))
    assert buf.size == 20 and buf._data.shape[1] == 32
    assert np.array_equal(buf.values, np.arange(0, 40, 2))
    assert np.array_equal(buf.x("time"), np.arange(100, 120))


def test_rolling_mean_uses_fewer_points_at_the_start():
    assert np.allclose(rolling_mean(np.array([1.0, 3.0, 5.0, 7.0]), 2), [1.0, 2.0, 4.0, 6.0])


def make_panel(qtbot) -> MonitorPanel:
    panel = MonitorPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 800)
    panel.show()
    return panel


def test_reward_speed_and_loss_plots_receive_points(qtbot):
    panel = make_panel(qtbot)
    train = [{"kind": "train", "step": 2048 * i, "t": 1e9 + i, "train/value_loss": 10.0 / (i + 1),
              "train/policy_gradient_loss": -0.01, "train/learning_rate": 3e-4} for i in range(5)]
    progress = [{"kind": "progress", "step": 1000 * i, "t": 1e9 + i, "fps": 900.0 + i, "total": 10000} for i in range(4)]
    panel.add_records(episodes(0, 30) + train + progress + [{"kind": "eval", "step": 600, "t": 1e9, "mean_reward": 40.0}])
    qtbot.waitUntil(lambda: panel.reward_plot.curve("episode").xData is not None
                    and len(panel.reward_plot.curve("episode").xData) == 30, timeout=3000)
    # plots redraw in turns of FRAME_S: under load the speed chart may come at the next turn
    qtbot.waitUntil(lambda: panel.speed_plot.curve("fps").getOriginalDataset()[1] is not None, timeout=3000)
    x, y = panel.reward_plot.curve("mean").getOriginalDataset()
    assert y[-1] == np.mean(np.arange(30))
    assert len(panel.speed_plot.curve("fps").getOriginalDataset()[1]) == 4
    # one chart per logged scalar, the learning rate too (on its own axis, not among the losses)
    assert set(panel.scalars.charts) == {"train/value_loss", "train/policy_gradient_loss", "train/learning_rate"}
    assert panel.reward_plot.buffer("eval").size == 1
    assert panel.progress.isVisible() and panel.progress.format() == "3,000 / 10,000 steps"  # no ETA: not running
    panel.set_run_state("running")  # 3 s of records: a speed so far (the chart's), too short a time for the time left
    assert panel.progress.format() == "3,000 / 10,000 steps · estimating time left..."
    assert panel.progress.toolTip() == "1,000 steps/s over the 3 s measured so far"
    panel.add_records([{"kind": "progress", "step": 500 * i + 1500, "t": 1e9 + i, "fps": 500.0, "total": 10000}
                       for i in range(4, 16)])
    assert re.fullmatch(r"9,000 / 10,000 steps · 0:0\d left, done at \d\d:\d\d", panel.progress.format())
    panel.add_records([{"kind": "progress", "step": 60, "t": 1e9, "fps": 400.0, "total": None,
                        "episodes": 3, "episodes_total": 20}])  # a baseline counts episodes
    assert panel.progress.format() == "3 / 20 episodes"
    # The crosshair readout names the value under the mouse.
    assert "episode: 29" in panel.reward_plot.readout_at(29 * 20)


def test_a_new_scalars_chart_appears_in_the_grid_never_as_a_window_of_its_own(qtbot, qapp):
    """A chart was shown before the grid took it: for an instant a window of its own (a flash on the desktop), which
    closed whatever menu was open, the row's » among them, each time a run logged a new scalar."""
    from PySide6.QtCore import QEvent, QObject

    from app.plots.training_plots import ScalarPlot

    class ShownAsWindow(QObject):
        def __init__(self):
            super().__init__()
            self.found: list[str] = []

        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            if event.type() == QEvent.Type.Show and isinstance(obj, ScalarPlot) and obj.isWindow():
                self.found.append(obj.objectName() or type(obj).__name__)
            return False

    panel = make_panel(qtbot)
    qtbot.waitExposed(panel)
    spy = ShownAsWindow()
    qapp.installEventFilter(spy)
    try:
        panel.add_records([{"kind": "train", "step": 2048 * i, "t": 1e9 + i, "train/value_loss": 1.0 / (i + 1),
                            "train/entropy_loss": -0.6} for i in range(3)])
        qtbot.waitUntil(lambda: {"train/value_loss", "train/entropy_loss"} <= set(panel.scalars.charts))
        qtbot.waitUntil(lambda: panel.scalars.charts["train/value_loss"].isVisible())
    finally:
        qapp.removeEventFilter(spy)
    assert spy.found == []
    assert all(not chart.isWindow() for chart in panel.scalars.charts.values())


def test_x_axis_switches_to_wall_time(qtbot):
    panel = make_panel(qtbot)
    panel.add_records(episodes(0, 5))
    panel.set_x_mode("time")
    qtbot.waitUntil(lambda: panel.reward_plot.curve("episode").xData is not None
                    and panel.reward_plot.curve("episode").getOriginalDataset()[0][0] > 1e9, timeout=3000)
    assert type(panel.reward_plot.getPlotItem().getAxis("bottom")).__name__ == "WallTimeAxis"


def test_gpu_plots_draw_memory_with_capacity_and_estimate_lines(qtbot):
    panel = make_panel(qtbot)
    panel.set_estimate(FitEstimate("fits", 8 * 2**30, 3 * 2**30, 0, [], "RTX 4060 Laptop", "fits", 16 * 2**30, True, 0))
    panel.add_telemetry(gpu_lines(10))
    mem = panel.gpu.plots["memory_used_bytes"]
    qtbot.waitUntil(lambda: mem.curve("gpu0").getOriginalDataset()[1] is not None, timeout=3000)
    assert abs(mem.curve("gpu0").getOriginalDataset()[1][0] - 2.0) < 1e-6  # GiB
    assert mem.has_series("proc0")  # this run's own share
    assert panel.gpu.capacity_line.isVisible() and panel.gpu.capacity_line.value() == 8.0
    assert panel.gpu.estimate_line.isVisible() and panel.gpu.estimate_line.value() == 3.0
    # the labels name the values (the capacity label once said "0.0 GiB": set while hidden)
    assert panel.gpu.capacity_line.label.toPlainText() == "capacity 8.0 GiB"
    assert panel.gpu.estimate_line.label.toPlainText() == "estimate 3.0 GiB"
    assert mem.message() is None


def test_nvml_unavailable_gpu_plots_show_the_reason_not_zeros(qtbot):
    panel = make_panel(qtbot)
    reason = "NVML shared library not found (no NVIDIA driver installed?)"
    panel.add_telemetry([{"t": 1e9, "kind": "status", "nvml": False, "reason": reason},
                         {"t": 1e9, "gpu": None, "rss_bytes": 123}])
    for plot in panel.gpu.gpu_widgets():
        assert plot.message() == f"No GPU data: {reason}"
        assert plot.point_count() == 0


def test_a_field_nvml_does_not_report_is_named_not_drawn(qtbot):
    panel = make_panel(qtbot)
    lines = gpu_lines(3)
    for line in lines:
        line["power_w"] = None
    panel.add_telemetry(lines)
    assert "not reported" in panel.gpu.plots["power_w"].message()
    assert panel.gpu.plots["power_w"].point_count() == 0
    assert panel.gpu.plots["temperature_c"].message() is None


def test_pause_holds_the_curves_until_resumed(qtbot):
    panel = make_panel(qtbot)
    panel.set_paused(True)
    panel.add_records(episodes(0, 5))
    qtbot.wait(150)
    assert panel.reward_plot.curve("episode").getOriginalDataset()[0] is None
    panel.follow()  # un-pauses and autoscales
    qtbot.waitUntil(lambda: panel.reward_plot.curve("episode").getOriginalDataset()[0] is not None, timeout=3000)


def test_rolling_mean_from_a_start_matches_the_whole_history():
    values = np.random.default_rng(1).normal(size=1000)
    for start in (0, 1, 99, 100, 101, 640, 999, 1000):
        assert np.allclose(rolling_mean_from(values, start, 100), rolling_mean(values, 100)[start:])


def test_envelope_keeps_the_newest_point_and_the_extremes():
    rng = np.random.default_rng(2)
    for n in (10, 1999, 2000, 2001, 50_001):
        y = rng.normal(size=n)
        y[n // 3] = 99.0  # one outlier episode must still show
        y[n // 2] = np.nan  # an episode without a reward wins no bucket
        idx = envelope_indices(y, 2000)
        assert len(idx) <= 2001 and idx[-1] == n - 1 and np.all(np.diff(idx) > 0)
        assert np.nanmax(y[idx]) == 99.0 and np.nanmin(y[idx]) == np.nanmin(y)


def test_a_long_run_draws_a_bounded_band_to_its_newest_episode(qtbot):
    panel = make_panel(qtbot)
    n = 12_000
    panel.add_records(episodes(0, n))
    plot = panel.reward_plot
    qtbot.waitUntil(lambda: plot.band_shown("episode"), timeout=5000)
    x, lo, hi = plot.band_data("episode")
    assert len(x) <= MAX_SYMBOLS + 2
    assert x[-1] == 20 * (n - 1) and hi[-1] == n - 1 and lo.min() == 0
    # the mean is of every episode, not of the drawn ones, and follows new batches
    panel.add_records(episodes(n, 5))
    qtbot.waitUntil(lambda: plot.band_data("episode")[2][-1] == n + 4, timeout=3000)
    mean = plot.buffer("mean").values
    assert len(mean) == n + 5 and np.allclose(mean, rolling_mean(np.arange(n + 5, dtype=float), ROLLING_WINDOW))
    # the line drawn is the mean's min/max envelope, ending with its newest value
    mx, my = plot.curve("mean").getOriginalDataset()
    assert len(my) < n / 2 and my[-1] == mean[-1] and my.min() == mean.min() and my.max() == mean.max()


def test_dark_theme_unchecked_check_box_has_a_visible_outline(qtbot, qapp):
    import pyqtgraph as pg
    from PySide6.QtWidgets import QCheckBox, QStyle, QStyleOptionButton

    from app.theme import DARK, apply_theme

    before = qapp.palette(), pg.getConfigOption("background"), pg.getConfigOption("foreground")
    apply_theme(qapp, dark=True)
    try:
        box = QCheckBox("option")
        qtbot.addWidget(box)
        box.resize(120, 30)
        img = box.grab().toImage()
        opt = QStyleOptionButton()
        box.initStyleOption(opt)
        rect = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, opt, box)
        # the indicator's outline must stand out from the dark background
        background = QColor(DARK["window"]).lightness()
        outline = max(img.pixelColor(x, y).lightness() for x in range(rect.left(), rect.right() + 1)
                      for y in range(rect.top(), rect.bottom() + 1))
        assert outline - background > 60
    finally:
        qapp.setPalette(before[0])
        pg.setConfigOptions(background=before[1], foreground=before[2])


def progress(first: int, n: int, t0: float = 1e9) -> list[dict]:
    return [{"kind": "progress", "step": 100 * i, "t": t0 + i, "fps": 1000.0 + i % 7, "total": 10**9}
            for i in range(first, first + n)]


def drawn_x_range(qtbot, plot, last_step: float) -> list[float]:
    """The plot's x range once it has drawn ``last_step`` (autoscale runs when it paints)."""
    qtbot.waitUntil(lambda: plot.curve("fps").xData is not None and plot.curve("fps").xData[-1] == last_step, timeout=3000)
    for _ in range(2):  # the first paint may still resize the axes (tick label widths)
        plot.grab()
        qtbot.wait(20)
    return list(plot.getPlotItem().vb.viewRange()[0])


def test_a_followed_axis_moves_in_steps_and_always_shows_the_newest_point(qtbot):
    panel = make_panel(qtbot)
    plot = panel.speed_plot
    panel.add_records(progress(0, 1000))
    first = drawn_x_range(qtbot, plot, 99_900)
    assert first[0] <= 0 and first[1] >= 99_900 * 1.03  # room ahead of the newest point
    panel.add_records(progress(1000, 10))  # within the room: the axis stays put
    assert drawn_x_range(qtbot, plot, 100_900) == first
    panel.add_records(progress(1010, 200))  # past it: the axis moves, the newest point in view
    moved = drawn_x_range(qtbot, plot, 120_900)
    assert moved != first and moved[1] >= 120_900


def test_a_long_line_is_drawn_per_pixel_and_a_zoom_draws_its_own_points(qtbot):
    panel = make_panel(qtbot)
    plot = panel.speed_plot
    n = 200_000
    panel.add_records(progress(0, n))
    qtbot.waitUntil(lambda: plot.curve("fps").xData is not None and plot.curve("fps").xData[-1] == 100 * (n - 1), timeout=5000)
    x, y = plot.curve("fps").getOriginalDataset()
    width = plot.getPlotItem().vb.width()
    assert len(x) <= 4 * max(200, width) and x[0] == 0 and y.min() == 1000 and y.max() == 1006
    plot.getPlotItem().vb.setXRange(5_000_000, 5_030_000, padding=0)  # 300 points: all of them drawn
    qtbot.waitUntil(lambda: len(plot.curve("fps").getOriginalDataset()[0]) < 400, timeout=3000)
    x, _ = plot.curve("fps").getOriginalDataset()
    assert x[0] <= 5_000_000 and x[-1] >= 5_030_000 and np.all(np.diff(x) == 100)
    plot.getPlotItem().autoBtnClicked()  # the plot's own "A" button: the whole run again
    qtbot.waitUntil(lambda: plot.curve("fps").getOriginalDataset()[0][0] == 0, timeout=3000)
    plot.getPlotItem().vb.setXRange(5_000_000, 5_030_000, padding=0)
    qtbot.waitUntil(lambda: len(plot.curve("fps").getOriginalDataset()[0]) < 400, timeout=3000)
    panel.follow()  # the Follow button: the same
    qtbot.waitUntil(lambda: plot.curve("fps").getOriginalDataset()[0][0] == 0, timeout=3000)
