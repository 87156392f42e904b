"""The view of a live plot follows its data with room ahead, in steps, from extents the plot already knows.

pyqtgraph's autoscale asks every item of the view for its data bounds whenever one changes (each
``setData``: ~5 ms a frame over a 12 h run's 11 plots), then sets a range fitted to the newest
point: with a point every 50 ms that range changes on every frame, and each change re-renders
the axes (ticks, labels, grid) and every item in view. ``FollowViewBox`` keeps pyqtgraph's
autoscale *state* (the "A" button, the menu's checkboxes, a wheel or drag turning it off per axis,
exactly as before) but computes the range itself from the series' extents the plot keeps up to
date with the new points only, and moves it in steps:

- x reaches ``FRACTION`` of the data's span past its newest point and moves only when the data gets
  there: a 12 h run moves its axis about every 20 minutes, a 10 s one every few frames;
- y has ``Y_ROOM`` of the data's span each side, set again only when a value leaves it (or the data
  fills less than ``Y_REFIT`` of it: another run, a cleared plot);
- a flat series (all values equal) is shown as its value +- ``FLAT_ROOM`` (pyqtgraph widens a
  zero-height range by 0.5 each way, which drew a learning rate of 3e-4 as a flat 0 on a +-0.4 axis).

A frame whose data stays inside the view sets no range at all. While the curves show a transform of the values
(a log axis, FFT, a derivative: the plot's menu), the extents kept are of the wrong numbers: the view then follows
the bounds of what is drawn (pyqtgraph's ``childrenBounds``), in the same steps. pyqtgraph's own autoscale must not
be given those: what the plot draws depends on the view's width and range (its level of detail), so a range fitted
exactly to it changes what is drawn, the bounds, the tick labels' width and so the view's width, and two such views
were seen trading ranges with each other for ever inside one ``processEvents`` (the GPU power and utilization
charts of a 12 h run). With ``pyqtgraph_range`` set (the bench's baseline) the view autoscales as pyqtgraph does, once
per frame that gave it data: pyqtgraph's peak downsampling makes the same loop of its own.
"""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem

FRACTION = 0.03  # room on x past the newest point
X_PAD = 0.01  # room on x before the first point
Y_ROOM = 0.08  # room on y each side of the data, when set again
Y_REFIT = 0.6  # the data filling less of the y range than this: fit it again (it shrank)
FLAT_ROOM = 0.05  # a flat series is shown as its value +- 5 %

Span = tuple[float, float]


def follow_x(current: Span, first: float, last: float) -> Span | None:
    """The x range to show for data from ``first`` to ``last``, or None when ``current`` still suits it: it holds the
    data, its left edge near the first point, and the data fills at least half of it."""
    span = max(last - first, 1e-300)
    low, high = current
    room = high - low
    if first - 2 * X_PAD * span <= low <= first and last <= high and span >= 0.5 * room:
        return None
    return first - X_PAD * span, last + FRACTION * span


def flat_room(low: float, high: float) -> Span:
    """``low .. high``, widened to the value +- ``FLAT_ROOM`` where all values are equal (as good as)."""
    if high - low <= 1e-9 * max(abs(high), abs(low), 1e-300):
        room = abs(high) * FLAT_ROOM or 1.0
        return low - room, high + room
    return low, high


def follow_y(current: Span, low: float, high: float) -> Span | None:
    """The y range to show for values from ``low`` to ``high``, or None when ``current`` still holds them all (and
    they fill at least ``Y_REFIT`` of it)."""
    low, high = flat_room(low, high)
    span = high - low
    r_low, r_high = current
    if r_low <= low and high <= r_high and span >= Y_REFIT * (r_high - r_low):
        return None
    return low - Y_ROOM * span, high + Y_ROOM * span


class FollowViewBox(pg.ViewBox):
    """A ViewBox whose autoscale follows ``extent()``: ``(x, y)``, each ``(low, high)`` of the data or None.

    A curve given new data no longer makes the view ask every item for its bounds: the plot calls
    ``follow_data()`` after a frame that changed something, the view then looks at the extents when it is next
    painted, and the range moves only in steps
    (see the module's docstring). ``range_sets`` counts the ranges it set (tests: an unchanged frame sets none).
    """

    def __init__(self, extent: Callable[[], tuple[Span | None, Span | None]] | None = None):
        super().__init__()
        self.extent = extent or (lambda: (None, None))
        self.pyqtgraph_range = False  # autoscale as pyqtgraph does (bench/gui_scale.py's baseline)
        self.transformed = False  # the curves drawn as a transform of the values (log, FFT, derivative: the plot's menu)
        self.range_sets = 0
        self._baseline_due = False  # pyqtgraph_range: follow_data() was called since pyqtgraph's autoscale last ran

    def _own(self) -> bool:
        return not self.pyqtgraph_range

    def _extents(self) -> tuple[Span | None, Span | None]:
        """What to follow: the data's extents the plot keeps, or the bounds of what is drawn while it is transformed."""
        if not self.transformed:
            return self.extent()
        x, y = self.childrenBounds()
        return (None if x is None else (float(x[0]), float(x[1])),
                None if y is None else (float(y[0]), float(y[1])))

    def set_transformed(self, on: bool) -> None:
        """The curves show a transform of the values (``on``), or the values again: autoscale fits what is drawn."""
        self.transformed = on
        if any(self.state["autoRange"]):
            self.queueUpdateAutoRange()

    def itemBoundsChanged(self, item: QGraphicsItem) -> None:  # noqa: N802 (pyqtgraph API)
        self._itemBoundsCache.pop(item, None)  # the plot calls follow_data() once its frame is drawn

    def follow_data(self) -> None:
        """The data changed: before the next paint, move the autoscaled axes if it left them (nothing otherwise).
        Deferred as pyqtgraph's own is: a redraw's turn (``FRAME_S``) stays the curves' alone."""
        self._baseline_due = True
        if any(self.state["autoRange"]):
            self.queueUpdateAutoRange()

    def updateAutoRange(self) -> None:  # noqa: N802 (pyqtgraph API)
        if not self._own():
            if self._baseline_due:  # once per frame: fitted to what is drawn, it would move again on every paint
                self._baseline_due = False
                super().updateAutoRange()
            self._autoRangeNeedsUpdate = False
            return
        if self._updatingRange:  # pyqtgraph's guard: setRange may resize items that ask for autoscale again
            return
        self._updatingRange: bool = True
        try:
            auto = self.state["autoRange"]
            if auto[0] is False and auto[1] is False:
                return
            x, y = self._extents()
            target = self.state["targetRange"]
            ranges = {}
            if auto[0] is not False and x is not None:
                ranges["xRange"] = follow_x((target[0][0], target[0][1]), *x)
            if auto[1] is not False and y is not None:
                ranges["yRange"] = follow_y((target[1][0], target[1][1]), *y)
            ranges = {k: v for k, v in ranges.items() if v is not None}
            if ranges:
                self.range_sets += 1
                self.setRange(padding=0.0, disableAutoRange=False, **ranges)
        finally:
            self._autoRangeNeedsUpdate = False
            self._updatingRange = False
