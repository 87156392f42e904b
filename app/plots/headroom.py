"""Room ahead of the newest point, so a plot that follows live data moves its x axis in steps.

Autoscale fits the x axis to the data; with a point arriving every 50 ms the range then changes on
every frame, and each change re-renders the axis (ticks, labels, grid) and every item in view. A
``Headroom`` item takes part in autoscale with bounds that reach ``FRACTION`` of the data's span
past its newest point and only move when the data gets there: a 12 h run moves its axis about
every 20 minutes, a 10 s one every few frames.

It also gives a flat series its y room: pyqtgraph widens a zero-height range by 0.5 each way, which
drew a learning rate of 3e-4 as a flat 0 on a +-0.4 axis; ``follow_y`` makes it ``value +- 5 %``.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF

FRACTION = 0.03
FLAT_ROOM = 0.05  # a flat series is shown as its value +- 5 %


class Headroom(pg.GraphicsObject):
    """An invisible item whose x bounds are the data's span plus headroom (no y bounds)."""

    def __init__(self):
        super().__init__()
        self.setFlag(self.GraphicsItemFlag.ItemHasNoContents)
        self.span: tuple[float, float] | None = None
        self.y_span: tuple[float, float] | None = None

    def follow(self, first: float | None, last: float | None) -> None:
        """The data now spans ``first`` .. ``last`` (``None``: no data)."""
        if first is None or last is None:
            self._set(None)
            return
        if self.span is not None:
            left, right = self.span
            stale = right - last > 2 * FRACTION * (last - first)  # cleared, or x switched units
            if left == first and last <= right and not stale:
                return
        self._set((first, last + FRACTION * (last - first)))

    def follow_y(self, low: float | None, high: float | None) -> None:
        """The data's y extent: a flat one (all values equal) gets +-5 % of its value as room, else none."""
        span = None
        if low is not None and high is not None and high - low <= 1e-9 * max(abs(high), abs(low), 1e-300):
            room = abs(high) * FLAT_ROOM or 1.0
            span = (low - room, high + room)
        if span != self.y_span:
            self.y_span = span
            self.informViewBoundsChanged()

    def _set(self, span: tuple[float, float] | None) -> None:
        if span != self.span:
            self.span = span
            self.informViewBoundsChanged()

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):  # noqa: N802 (pyqtgraph API)
        return self.span if ax == 0 else self.y_span

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return QRectF()

    def paint(self, *_args) -> None:
        pass
