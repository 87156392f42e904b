"""A long line given samples that fall in its last pixel column, within the values drawn there, is not drawn again:
no pixel would change (a 24 h run's column is ~90 s of GPU samples at 5 a second). Anything a pixel shows is drawn."""

from __future__ import annotations

import numpy as np
import pytest

from app.plots.training_plots import SpeedPlot

from .test_follow_view import shown

N = 200_000


@pytest.fixture
def long_line(qtbot):
    pages: list = []
    plot = shown(qtbot, SpeedPlot(), pages)
    x = np.arange(N, dtype=float)
    plot.buffer("fps").extend(x, x, 1000 + 10 * np.sin(x))  # each pixel column holds ~990 .. ~1010
    assert plot.refresh()
    view = None
    for _ in range(100):  # the view follows the data, the axes take their tick labels' width: until it stays put
        plot.grab()
        qtbot.wait(20)
        if plot._pixel_view() == view:
            break
        view = plot._pixel_view()
    plot.forget_drawn()
    assert plot.refresh()  # drawn for the view it now has
    yield plot
    pages.clear()


def given_data(plot) -> list:
    seen: list = []
    plot.curve("fps").sigPlotChanged.connect(lambda *_: seen.append(1))
    return seen


def pixel(plot) -> float:
    vb = plot.getPlotItem().vb
    (low, high) = vb.viewRange()[0]
    return (high - low) / vb.width()


def test_samples_in_the_last_column_within_its_values_draw_nothing(long_line):
    assert pixel(long_line) > 100  # ~290 samples a column: the case of a long run
    seen = given_data(long_line)
    buf = long_line.buffer("fps")
    for i in range(5):
        buf.append(N + i * 0.1, N + i * 0.1, 1000.0 + i)  # a hair later, inside the column's 990 .. 1010
        assert not long_line.refresh()
    assert seen == [] and long_line.curve("fps").getData()[0][-1] < N  # the last drawn point is an older one


def test_a_value_past_the_column_or_a_sample_in_the_next_column_is_drawn(long_line):
    seen = given_data(long_line)
    buf = long_line.buffer("fps")
    buf.append(N + 0.1, N + 0.1, 1000.0)
    assert not long_line.refresh()
    buf.append(N + 0.2, N + 0.2, 1050.0)  # above what the column shows: both new samples are drawn
    assert long_line.refresh() and len(seen) == 1
    x, y = long_line.curve("fps").getData()
    assert x[-1] == N + 0.2 and y[-1] == 1050.0
    buf.append(N + 0.3 + pixel(long_line), N + 0.3, 1000.0)  # one column on
    assert long_line.refresh() and len(seen) == 2 and long_line.curve("fps").getData()[0][-1] > N + 0.3


def test_a_break_or_a_new_view_draws_again(long_line):
    seen = given_data(long_line)
    buf = long_line.buffer("fps")
    buf.mark_break()  # the run stopped and goes on: a segment ends
    buf.append(N + 0.1, N + 0.1, 1000.0)
    assert long_line.refresh() and len(seen) == 1
    long_line.getPlotItem().vb.setXRange(N * 0.999, N * 1.001, padding=0)  # zoomed in: each sample is pixels apart
    buf.append(N + 0.2, N + 0.2, 1000.0)
    assert long_line.refresh() and len(seen) == 2 and long_line.curve("fps").getData()[0][-1] == N + 0.2
