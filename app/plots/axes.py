"""The x axis of counts (steps, episodes): ticks written as people read counts (``20M``, ``12.5k``)."""

from __future__ import annotations

import pyqtgraph as pg


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


class StepAxis(pg.AxisItem):
    """The x axis of steps or episodes, its ticks written by ``count_label``."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802 - pyqtgraph's
        return [count_label(v * scale, spacing * scale) for v in values]
