"""The step axis writes its ticks as people read counts (``20M``, not pyqtgraph's ``2e+07``, which crowds a
small chart's axis at a night's 86 M steps), and never so many that two labels run together (issue 42)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.plots.axes import StepAxis, count_label
from app.plots.live_plot import LivePlot
from tests.app.layout.monitor_room import x_labels


@pytest.mark.parametrize(("value", "spacing", "text"), [
    (0, 2e7, "0"), (2e7, 2e7, "20M"), (86_000_000, 1e7, "86M"), (12_500, 2_500, "12.5k"), (10_000, 5_000, "10k"),
    (1.2e9, 2e8, "1.2B"), (500, 100, "500"), (0.5, 0.1, "0.5"), (1_500, 500, "1.5k"), (2_000, 10, "2,000")])
def test_a_count_tick_reads_as_people_write_it(value, spacing, text):
    assert count_label(value, spacing) == text


def test_a_steps_plot_uses_the_step_axis_and_a_time_plot_does_not(qtbot):
    from PySide6.QtWidgets import QWidget

    holder = QWidget()  # a child plot: closing the holder at the end does not close the plot twice
    qtbot.addWidget(holder)
    plot = LivePlot("Episode reward", "reward", parent=holder)
    assert isinstance(plot.getPlotItem().getAxis("bottom"), StepAxis)
    assert plot.getPlotItem().getAxis("bottom").tickStrings([0.0, 2e7, 4e7], 1.0, 2e7) == ["0", "20M", "40M"]
    plot.set_x_mode("time")
    assert not isinstance(plot.getPlotItem().getAxis("bottom"), StepAxis)




@pytest.fixture
def steps_plot(qtbot):
    holder = QWidget()
    qtbot.addWidget(holder)
    plot = LivePlot("train/entropy_loss", "")
    plot.setMinimumHeight(0)
    QVBoxLayout(holder).addWidget(plot)
    holder.show()
    buffer = plot.add_series("entropy_loss", "entropy_loss", "#1f77b4")
    steps = np.linspace(0, 50e6, 200)
    buffer.extend(steps, steps, np.linspace(-0.7, -0.1, 200))
    plot.refresh()
    return holder, plot


# the spans and widths of the scalar grid at 1280x720 and 1366x768 (a chart ~140-230 px wide) whose labels ran
# together on pyqtgraph's spacing: "100.2k100.4k100.6k100.8k" at 200 px, "16.8k17.0k" at 140 px
@pytest.mark.parametrize(("width", "low", "high"), [(200, 100_000, 101_000), (240, 100_000, 101_000),
                                                    (140, 16_500, 17_300), (170, 16_600, 17_400), (150, 0, 1_000),
                                                    (130, 1_234_567, 1_250_000), (230, 16_600, 17_250)])
def test_a_narrow_charts_step_labels_never_run_together(qtbot, steps_plot, width, low, high):
    holder, plot = steps_plot
    holder.resize(width, 160)
    plot.getPlotItem().vb.setXRange(low, high, padding=0)
    qtbot.wait(20)
    assert_apart(x_labels(plot))


def assert_apart(labels: list[tuple[float, float, str]]) -> None:
    assert labels, "the axis says where it is"
    for (_left, right, text), (next_left, _right, next_text) in zip(labels, labels[1:], strict=False):
        assert next_left - right >= 4, (text, next_text, labels)  # a gap between two numbers, not "16.8k17.0k"


def test_a_wide_charts_step_axis_keeps_pyqtgraphs_ticks(qtbot, steps_plot):
    holder, plot = steps_plot
    holder.resize(900, 200)
    axis = plot.getPlotItem().getAxis("bottom")
    qtbot.waitUntil(lambda: axis.geometry().width() > 700)
    size = axis.geometry().width()
    assert axis.tickSpacing(0.0, 50e6, size) == pg.AxisItem.tickSpacing(axis, 0.0, 50e6, size)


@pytest.mark.parametrize(("width", "low", "high"), [(150, 362_882, 363_780), (150, 78_097_391, 78_097_932),
                                                    (160, 79_749, 214_470)])
def test_a_chart_narrower_than_its_labels_still_labels_one_tick(qtbot, steps_plot, width, low, high):
    holder, plot = steps_plot
    holder.resize(width, 160)  # the step that leaves a label its room is wider than the span, or its one tick at an edge
    plot.getPlotItem().vb.setXRange(low, high, padding=0)
    qtbot.wait(20)
    assert_apart(x_labels(plot))  # pyqtgraph drops a label crossing the axis' end: none was left
