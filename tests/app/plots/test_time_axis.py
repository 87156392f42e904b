"""The wall-time axis: local clock ticks, as many as a chart's width has room for (a 24 h history on a small GPU
chart read as a single "27" with pyqtgraph's DateAxisItem)."""

from __future__ import annotations

from datetime import datetime

import pyqtgraph as pg

from app.plots.axes import TIME_LABEL_PX, WallTimeAxis, time_label, time_ticks

NOON = datetime(2026, 11, 27, 12, 7, 41).timestamp()


def test_a_day_on_a_small_chart_gets_clock_ticks_that_have_room_and_land_on_whole_hours():
    for span_h, width in ((24, 200), (24, 500), (12, 200), (48, 260), (1, 200)):
        low, high = NOON - span_h * 3600, NOON
        step, ticks = time_ticks(low, high, width)
        assert 2 <= len(ticks) and step * width / (high - low) >= TIME_LABEL_PX, (span_h, width, ticks)
        assert all(low <= t <= high for t in ticks)
        for t in ticks:  # on the local clock's whole steps
            when = datetime.fromtimestamp(t)
            assert when.second == 0 and (step < 3600 or when.minute == 0), when


def test_a_day_on_a_gpu_chart_reads_two_labels_at_any_hour():
    """A 24 h run's GPU charts at 1280x720 are ~170-190 px wide, the view 4 % past the data: at some hours the one
    tick of two that was not a date sat too near an edge for its label (pyqtgraph leaves such a label out)."""
    for width in (170, 190, 260):
        for minutes in range(0, 24 * 60, 10):
            high = NOON + minutes * 60
            low = high - 24 * 1.04 * 3600
            step, ticks = time_ticks(low, high, width)
            margin = (high - low) * TIME_LABEL_PX / 2 / width  # a label centred nearer an edge than this is cut
            assert len([t for t in ticks if low + margin <= t <= high - margin]) >= 2, (width, minutes, step)
    step, ticks = time_ticks(NOON - 24 * 3600, NOON, 500)
    labels = [time_label(t, step) for t in ticks]
    assert "Nov 27" in labels and "18:00" in labels  # midnight reads as the date
    assert time_label(NOON, 30) == "12:07:41" and time_label(NOON, 600) == "12:07" and time_label(NOON, 86400) == "Nov 27"


def test_the_plots_time_axis_writes_those_ticks(qtbot):
    widget = pg.PlotWidget(axisItems={"bottom": WallTimeAxis("bottom")})
    qtbot.addWidget(widget)
    widget.resize(260, 200)
    widget.plot([NOON - 24 * 3600, NOON], [0, 1])
    widget.setLabel("bottom", "wall time")
    widget.show()
    qtbot.waitExposed(widget)
    axis = widget.getPlotItem().getAxis("bottom")
    qtbot.waitUntil(lambda: axis.range[1] > 1e9)  # the view took the data's range
    low, high = widget.getPlotItem().viewRange()[0]
    (step, ticks), = axis.tickValues(low, high, axis.width())
    strings = axis.tickStrings(ticks, axis.autoSIPrefixScale, step)  # the scale pyqtgraph draws them with
    assert len(strings) >= 2 and all(":" in s or s.startswith("Nov") for s in strings), strings
    assert "x1e" not in axis.labelString()  # unix seconds (~1.8e9) are not scaled by an SI prefix: "00:00:01"
    assert set(strings) & {time_label(t, step) for t in time_ticks(NOON - 24 * 3600, NOON, axis.width())[1]}


def test_labels_with_seconds_get_the_room_their_width_needs(qtbot):
    """A run's first minute on a 280 px CPU chart (1366x768): ticks 15 s apart at 48 px each wrote "21:34:45" against
    "21:35:00" with no gap. Each label, as the axis' font draws it, now keeps a gap to the next."""
    from PySide6.QtGui import QFontMetricsF

    axis = WallTimeAxis("bottom")
    font = axis.style["tickFont"] or axis.font()
    for span_s, width in ((60, 280), (90, 280), (40, 200), (300, 280)):
        step, ticks = time_ticks(NOON - span_s, NOON, width)
        labels = [time_label(t, step) for t in ticks]
        widest = max(QFontMetricsF(font).horizontalAdvance(label) for label in labels)
        assert step * width / span_s >= widest + 4, (span_s, width, step, labels)
