"""The step axis writes its ticks as people read counts (``20M``, not pyqtgraph's ``2e+07``, which crowds a
small chart's axis at a night's 86 M steps)."""

from __future__ import annotations

import pytest

from app.plots.axes import StepAxis, count_label
from app.plots.live_plot import LivePlot


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
