"""The min/max band paints what its columns hold: each column's span, nothing over a break, and a
single column or a flat stretch at least one pixel wide and high."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor

from app.plots.band_item import BandItem

pytestmark = pytest.mark.gui


def render(qtbot, x, lo, hi, log_y=False):
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.setBackground("#000000")
    plot.getPlotItem().hideAxis("left")
    plot.getPlotItem().hideAxis("bottom")
    band = BandItem(QColor(255, 0, 0, 255))
    plot.addItem(band)
    band.set_band(x, lo, hi)
    if log_y:
        plot.getPlotItem().setLogMode(y=True)
    plot.resize(400, 200)
    plot.show()
    qtbot.waitExposed(plot)
    plot.setXRange(0, 100, padding=0)
    plot.setYRange(*((0, 3) if log_y else (0, 100)), padding=0)
    image = plot.grab().toImage()
    vb = plot.getPlotItem().vb
    return image, vb, plot


def red_at(image, vb, plot, x, y) -> bool:
    point = plot.mapFromScene(vb.mapViewToScene(pg.Point(x, y)))
    return QColor(image.pixel(point.x(), point.y())).red() > 200


def test_columns_fill_their_span_and_a_break_leaves_a_gap(qtbot):
    x = np.array([0, 10, 20, 30, 60, 60, 70, 80], float)  # a break holds the next stretch's first x (segmented_band)
    lo = np.array([10, 20, 30, 30, np.nan, 50, 60, 60], float)
    hi = np.array([40, 50, 60, 60, np.nan, 90, 90, 90], float)
    image, vb, plot = render(qtbot, x, lo, hi)
    assert red_at(image, vb, plot, 5, 25) and red_at(image, vb, plot, 15, 45) and red_at(image, vb, plot, 75, 80)
    assert not red_at(image, vb, plot, 5, 45) and not red_at(image, vb, plot, 15, 15)  # above and below a column's span
    assert not red_at(image, vb, plot, 45, 40) and not red_at(image, vb, plot, 55, 55)  # the break: no fill over the gap


def test_a_single_flat_column_still_shows_and_bounds_come_from_the_data(qtbot):
    image, vb, plot = render(qtbot, [50.0], [42.0], [42.0])
    assert red_at(image, vb, plot, 50, 42)
    band = next(item for item in vb.addedItems if isinstance(item, BandItem))
    assert band.dataBounds(0) == (50.0, 50.0) and band.dataBounds(1) == (42.0, 42.0)
    band.set_band([], [], [])
    assert band.is_empty() and band.dataBounds(1) == (None, None)


def test_log_scale_fills_between_the_logs(qtbot):
    image, vb, plot = render(qtbot, [0.0, 50.0, 100.0], [10.0, 10.0, 10.0], [100.0, 100.0, 100.0], log_y=True)
    assert red_at(image, vb, plot, 25, 1.5) and not red_at(image, vb, plot, 25, 2.5) and not red_at(image, vb, plot, 25, 0.5)
