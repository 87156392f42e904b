"""A value axis writes no more labels than a chart's height has room for: pyqtgraph's own spacing put 0.2, 0.4, 0.6
and 0.8 over each other on a loss chart ~40 px tall (the chart grid at 1920x1080 and 150 %)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.plots.axes import ValueAxis, nice_steps
from app.plots.live_plot import LivePlot


@pytest.mark.parametrize(("least", "step"), [(0.3, 0.5), (0.1, 0.1), (0.11, 0.2), (0.21, 0.5), (0.51, 1.0), (7, 10),
                                             (3.3e-7, 5e-7), (2000, 2000)])
def test_the_step_is_the_smallest_round_one_that_leaves_the_room(least, step):
    assert nice_steps(least)[0] == pytest.approx(step)


@pytest.mark.parametrize(("least", "minor"), [(0.1, 0.02), (0.11, 0.05), (0.3, 0.1), (0.51, 0.2), (9.5, 2.0)])
def test_the_minor_step_divides_the_major_one_roundly(least, minor):
    assert nice_steps(least)[1] == pytest.approx(minor)


def drawn_labels(axis: pg.AxisItem) -> list[tuple[float, float, str]]:
    """The axis' labels as it paints them: (top, bottom, text), from the top down."""
    image = QImage(200, 400, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    assert specs is not None
    return sorted((rect.top(), rect.bottom(), text) for rect, _flags, text in specs[2])


def loss_plot(qtbot, height: int) -> tuple[QWidget, LivePlot]:
    holder = QWidget()
    qtbot.addWidget(holder)
    plot = LivePlot("train/value_loss", "")
    plot.setMinimumHeight(0)
    QVBoxLayout(holder).addWidget(plot)
    holder.resize(300, height)
    holder.show()
    buffer = plot.add_series("value_loss", "value_loss", "#1f77b4")
    steps = np.arange(0, 2000, 10, dtype=float)
    buffer.extend(steps, steps, np.linspace(0.0, 0.95, 200))
    plot.refresh()
    plot.getPlotItem().vb.setYRange(0.0, 0.95, padding=0)
    qtbot.wait(50)
    return holder, plot  # the holder kept: it owns the plot


def test_a_short_charts_labels_do_not_overlap(qtbot):
    _holder, plot = loss_plot(qtbot, 130)
    axis = plot.getAxis("left")
    assert isinstance(axis, ValueAxis)
    assert axis.geometry().height() < 45  # as short as the chart grid's rows on a laptop screen at 150 %
    labels = drawn_labels(axis)
    assert len(labels) >= 1, labels
    for (_top, bottom, _text), (next_top, _bottom, _next) in zip(labels, labels[1:], strict=False):
        assert next_top >= bottom, labels  # each label below the one above it, not over it


def test_a_tall_chart_keeps_pyqtgraphs_ticks(qtbot):
    _holder, plot = loss_plot(qtbot, 400)
    axis = plot.getAxis("left")
    size = axis.geometry().height()
    assert axis.tickSpacing(0.0, 0.95, size) == pg.AxisItem.tickSpacing(axis, 0.0, 0.95, size)
    assert len(drawn_labels(axis)) >= 4
