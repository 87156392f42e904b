"""Only the plots on screen redraw: one in a hidden tab or scrolled out of the chart grid waits, then catches up once."""

from __future__ import annotations

import time

import numpy as np
from PySide6.QtWidgets import QTabWidget, QWidget

from app.monitor.panel import MonitorPanel
from app.plots.training_plots import SpeedPlot


def drawn(plot, key: str) -> list[float]:
    y = plot.curve(key).getData()[1]
    return [] if y is None else y.tolist()


def test_a_plot_in_a_hidden_tab_draws_nothing_and_catches_up_once_shown(qtbot):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    plot = SpeedPlot()
    tabs.addTab(plot, "speed")
    tabs.addTab(QWidget(), "other")
    tabs.resize(600, 400)
    tabs.show()
    fps = plot.buffer("fps")
    fps.extend(np.arange(10) * 100.0, np.arange(10.0), np.arange(10.0))
    assert plot.refresh() and drawn(plot, "fps") == list(np.arange(10.0))

    tabs.setCurrentIndex(1)
    fps.extend(np.arange(10, 20) * 100.0, np.arange(10.0, 20.0), np.arange(10.0, 20.0))
    assert not plot.in_view()
    assert not plot.refresh()
    assert len(drawn(plot, "fps")) == 10  # the new points wait in the buffer

    tabs.setCurrentIndex(0)
    assert plot.refresh()  # all that came meanwhile, at once
    assert drawn(plot, "fps") == list(np.arange(20.0))
    assert not plot.refresh()  # and only once


def test_a_chart_scrolled_out_of_the_grid_waits_and_draws_when_scrolled_into_view(qtbot):
    panel = MonitorPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 520)
    panel.show()
    now = time.time()
    keys = [f"train/loss_{i}" for i in range(4)]  # with the speed chart: two rows, one in view
    panel.add_records([{"kind": "train", "step": 100 * s, "t": now + s, **{k: float(s + i) for i, k in enumerate(keys)}}
                       for s in range(5)])
    charts = panel.scalars.charts
    first, last = charts[keys[0]], charts[keys[-1]]
    qtbot.waitUntil(lambda: len(drawn(first, "value")) == 5, timeout=5000)
    assert last.isVisible() and not last.in_view()  # shown in the grid, but below what the grid's view shows
    panel.redraw()
    assert drawn(last, "value") == []

    panel.scalars.charts_area.ensureWidgetVisible(last)
    assert last.in_view()
    qtbot.waitUntil(lambda: drawn(last, "value") == [3.0, 4.0, 5.0, 6.0, 7.0], timeout=5000)


def test_a_redraw_asked_of_an_unchanged_plot_gives_its_curves_no_data_and_new_points_reach_them(qtbot):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    plot = SpeedPlot()
    tabs.addTab(plot, "speed")
    tabs.resize(600, 300)
    tabs.show()
    fps = plot.buffer("fps")
    fps.extend(np.arange(5000) * 100.0, np.arange(5000.0), np.sin(np.arange(5000.0)))  # decimated: longer than the plot
    assert plot.refresh()
    given: list[int] = []
    plot.curve("fps").sigPlotChanged.connect(lambda *_: given.append(len(drawn(plot, "fps"))))
    before = drawn(plot, "fps")
    for ask in (lambda: plot.set_smoothing(0.0), lambda: plot.set_log_y(False), plot._redecimate):
        ask()  # each asks every curve to be drawn again; the same points over the same columns need no setData
        assert not plot.refresh()
    assert given == [] and drawn(plot, "fps") == before
    fps.append(500_000.0, 5000.0, 2.0)
    assert plot.refresh() and len(given) == 1 and drawn(plot, "fps")[-1] == 2.0
    after = drawn(plot, "fps")
    plot.forget_drawn()  # the bench's worst case: every curve given its data again, the same
    assert plot.refresh() and len(given) == 2 and drawn(plot, "fps") == after


def test_one_clip_for_several_widgets_gives_each_its_own_answer(qtbot):
    """The Monitor's redraw keeps the ancestors' shown parts for all its plots (``Clip``): asked for siblings in a
    scroll area in turn, each still answers for its own place, and a clip made after a scroll sees the scroll."""
    from PySide6.QtWidgets import QScrollArea, QVBoxLayout

    from app.plots.on_screen import Clip, in_view

    area = QScrollArea()
    qtbot.addWidget(area)
    column = QWidget()
    layout = QVBoxLayout(column)
    rows = [QWidget() for _ in range(4)]
    for row in rows:
        row.setFixedHeight(300)
        layout.addWidget(row)
    area.setWidgetResizable(True)
    area.setWidget(column)
    area.resize(300, 250)
    area.show()
    qtbot.waitExposed(area)

    clip = Clip()
    assert [in_view(row, clip) for row in rows] == [True, False, False, False]
    assert [in_view(row, clip) for row in reversed(rows)] == [False, False, False, True]  # kept parts, same answers
    area.ensureWidgetVisible(rows[-1])
    clip = Clip()
    assert [in_view(row, clip) for row in rows] == [False, False, False, True]
    assert [in_view(row) for row in rows] == [False, False, False, True]
