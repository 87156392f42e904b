"""The axes: counts (steps, episodes) written as people read counts (``20M``, ``12.5k``), wall time as the local
clock, as many ticks as a chart's width has room for, and values with no more labels than a chart's height has
room for."""

from __future__ import annotations

import math
from datetime import datetime

import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF


def count_label(value: float, spacing: float) -> str:
    """A tick of a count axis (steps, episodes) as people read it: ``0``, ``500``, ``12.5k``, ``20M``, ``1.2B``, with
    the decimals its tick spacing needs (pyqtgraph's own ``2e+07`` crowds a small chart's axis)."""
    if value == 0:
        return "0"
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= div and spacing >= div / 10:
            step = spacing / div
            decimals = next((d for d in range(3) if abs(round(step, d) - step) < 1e-9 * max(1.0, step)), 2)
            return f"{value / div:.{decimals}f}{suffix}"
    return f"{value:,.0f}" if spacing >= 1 else f"{value:g}"


X_LABEL_GAP_PX = 8  # the least room between two step labels: at 4 px "100.2k 100.4k" still read as one number


class StepAxis(pg.AxisItem):
    """The x axis of steps or episodes, its ticks written by ``count_label``, their labels never touching.

    pyqtgraph always labels every major tick and spaces them by the axis' length alone (at least ~2.25 intervals),
    whatever the labels' width: a chart ~200 px wide over 100,000-101,000 steps read "100.2k100.4k100.6k100.8k",
    one over 16.5k-17.3k at 140 px "16.8k17.0k". Where a label and its gap would not fit between two major ticks, a
    wider round step is taken (as ``ValueAxis`` does for height); a wide chart keeps pyqtgraph's."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802 - pyqtgraph's
        return [count_label(v * scale, spacing * scale) for v in values]

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:  # noqa: N802,N803
        levels = super().tickSpacing(minVal, maxVal, size)
        low, high = min(minVal, maxVal), max(minVal, maxVal)
        span = high - low
        if not levels or span == 0 or size <= 0 or not math.isfinite(span):
            return levels
        step = levels[0][0]
        if self._fits(step, low, high, size):
            return levels
        minor = step
        for _ in range(40):  # each round step is 2 to 2.5 times the last: 40 tries span 12 orders of magnitude
            step, minor = nice_steps(step * 1.001)
            if self._fits(step, low, high, size):
                break
        return [(step, 0.0), (minor, 0.0)]  # minor ticks: marks and grid lines, labelled only where pyqtgraph finds room

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:  # noqa: N802,N803
        """pyqtgraph's ticks of ``tickSpacing``; where none of the major ones has room for its label inside the axis
        (a step wider than a narrow chart's span, a lone tick at its edge, which pyqtgraph then leaves unlabelled: 17
        of 1,500 random spans on charts 110-160 px wide had no x label at all), the finer tick nearest the middle
        whose label fits, alone."""
        levels = super().tickValues(minVal, maxVal, size)
        low, high = min(minVal, maxVal), max(minVal, maxVal)
        if len(levels) < 2 or size <= 0 or not high > low:
            return levels
        (step, major), (finer, minor) = levels[0], levels[1]
        if any(self._inside(v, step, low, high, size) for v in major):
            return levels
        middle = (low + high) / 2
        alone = sorted((v for v in [*major, *minor] if self._inside(v, finer, low, high, size)), key=lambda v: abs(v - middle))
        return [(finer, alone[:1])] if alone else levels

    def _fits(self, step: float, low: float, high: float, size: float) -> bool:
        """Whether the widest label of ticks ``step`` apart, and its gap, fit between two of them."""
        first, last = math.ceil(low / step) * step, math.floor(high / step) * step
        widest = max(self._label_px(v, step) for v in (first, last))
        return step * size / (high - low) >= widest + X_LABEL_GAP_PX

    def _inside(self, value: float, step: float, low: float, high: float, size: float) -> bool:
        """Whether the label of the tick at ``value`` lies inside the axis (pyqtgraph draws no label that does not)."""
        x, half = (value - low) / (high - low) * size, self._label_px(value, step) / 2 + 2  # pyqtgraph's rect: ~2 px wider
        return x - half >= 0 and x + half <= size

    def _label_px(self, value: float, step: float) -> float:
        text = self.tickStrings([value], self.autoSIPrefixScale * self.scale, step)[0]
        return QFontMetricsF(self.style["tickFont"] or self.font()).horizontalAdvance(text)


# tick steps of a wall-time axis, in seconds: the first that leaves each label its room is taken
TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 8 * 3600, 12 * 3600, 86400,
              2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400)
TIME_LABEL_PX = 48  # "23:45" and its gap at the axis' font; "Nov 27" fits too
# "23:45:30" and its gap: a step under a minute labels its seconds, and at 48 px a run's first minutes on a 280 px CPU
# chart (1366x768) wrote "21:34:45" against "21:35:00" with no gap
TIME_LABEL_SECONDS_PX = 64


def label_room(step: float) -> int:
    """The pixels a wall-time tick's label and its gap take at tick step ``step`` (seconds)."""
    return TIME_LABEL_SECONDS_PX if step < 60 else TIME_LABEL_PX


def time_ticks(low: float, high: float, width_px: float) -> tuple[float, list[float]]:
    """The tick step and the ticks of a wall-time axis over [low, high] (unix seconds) ``width_px`` wide: as many
    as have room, on whole local minutes, hours or days (so 06:00, 12:00, 18:00, and midnight as the date).

    The step is the smallest that leaves each label its room (``label_room``: wider with seconds). (Counting the
    ticks that could fall in the span instead took 12 h steps for a 24 h chart 190 px wide: at some hours of the day
    one of its two ticks sat too near an edge for its label, and the chart read "Nov 27" alone.)"""
    span = max(high - low, 1e-9)
    width = max(width_px, 1.0)
    step = next((s for s in TIME_STEPS if s * width / span >= label_room(s)),
                TIME_STEPS[-1] * (int(span * TIME_LABEL_PX / (TIME_STEPS[-1] * width)) + 1))
    offset = _utc_offset(low)  # local time: ticks land on the clock's whole hours
    first = math.ceil((low + offset) / step) * step - offset
    count = int((high - first) // step) + 1
    return step, [first + i * step for i in range(max(0, count))]


def time_label(value: float, step: float) -> str:
    """One wall-time tick in local time: seconds only where the step needs them, a date at midnight and for day
    steps (``03:15``, ``03:15:30``, ``Nov 27``)."""
    when = datetime.fromtimestamp(value)
    if step >= 86400 or (when.hour == 0 and when.minute == 0 and when.second == 0 and step >= 3600):
        return f"{when:%b} {when.day}"
    return f"{when:%H:%M:%S}" if step < 60 else f"{when:%H:%M}"


def _utc_offset(t: float) -> float:
    return datetime.fromtimestamp(t).astimezone().utcoffset().total_seconds()  # type: ignore[union-attr]


class WallTimeAxis(pg.AxisItem):
    """The x axis of wall time: local clock ticks as many as the plot's width has room for. (pyqtgraph's
    ``DateAxisItem`` showed a 24 h history on a small chart as a single "27", the day of the month.)"""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)  # unix seconds are ~1.8e9: no "(x1e+09)" scale on a clock

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:  # noqa: N802,N803
        step, ticks = time_ticks(minVal, maxVal, size)
        return [(step, ticks)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802 - pyqtgraph's
        return [time_label(v * scale, spacing * scale) for v in values]


LABEL_ROOM = 1.25  # from one value label to the next, in label heights (pyqtgraph's, 80 % of a line): ~3 px between them


# round steps as (multiple of a power of ten, the minor ticks between two major ones)
ROUND_STEPS = ((1.0, 5), (2.0, 4), (5.0, 5), (10.0, 5))


def nice_steps(least: float) -> tuple[float, float]:
    """The smallest 1, 2 or 5 times a power of ten that is at least ``least`` (> 0), and its minor step."""
    power = 10.0 ** math.floor(math.log10(least))
    major, minors = next((m * power, n) for m, n in ROUND_STEPS if m * power >= least * (1 - 1e-9))
    return major, major / minors


class ValueAxis(pg.AxisItem):
    """A value (y) axis whose labelled ticks never crowd: pyqtgraph's own spacing puts at least ~2 intervals on any
    axis, so a chart 40 px tall wrote 0.2, 0.4, 0.6 and 0.8 over each other (a laptop screen at 150 %). Where its
    major ticks would stand closer than ``LABEL_ROOM`` label heights, a wider step is taken; taller charts keep
    pyqtgraph's."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:  # noqa: N802,N803
        levels = super().tickSpacing(minVal, maxVal, size)
        span = abs(maxVal - minVal)
        if not levels or span == 0 or size <= 0 or not math.isfinite(span):
            return levels
        least = LABEL_ROOM * self.label_height() * span / size  # the step that leaves each label its room
        if levels[0][0] >= least:
            return levels
        major, minor = nice_steps(least)
        return [(major, 0.0), (minor, 0.0)]  # minor ticks: marks and grid lines, their labels only where they fit

    def label_height(self) -> float:
        """A tick label's height in pixels, as pyqtgraph measures it (80 % of the font's line)."""
        font = self.style["tickFont"] or self.font()
        return 0.8 * QFontMetricsF(font).height()
