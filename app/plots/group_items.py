"""A group of seeds on a plot: its aggregate as a line, its 95 % band as a translucent fill, its seeds thin and faint.

The band is pyqtgraph's ``FillBetweenItem`` between its low and high edges: a group's curve has at most
``core.results.group_curves.MAX_POINTS`` (500) points, where a polygon fill costs well under a millisecond
(``app.plots.band_item`` is for the monitor's min/max bands of tens of thousands of steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyqtgraph as pg

from core.results.group_curves import GroupCurve

BAND_ALPHA = 60
SEED_ALPHA = 90


@dataclass
class GroupItems:
    """What one group draws: ``line`` (in the legend), ``band`` (None for one seed) and ``seeds`` (when shown)."""

    line: pg.PlotDataItem
    band: pg.FillBetweenItem | None = None
    seeds: list[pg.PlotDataItem] = field(default_factory=list)


def draw_group(item: pg.PlotItem, group: GroupCurve, color: str, show_seeds: bool) -> GroupItems:
    """Add ``group`` to ``item`` in ``color``; the legend entry reads ``label (n=5)``."""
    band = None
    if group.low is not None and group.high is not None:
        fill = pg.mkColor(color)
        fill.setAlpha(BAND_ALPHA)
        edge = pg.mkPen(None)
        band = pg.FillBetweenItem(pg.PlotCurveItem(group.x, group.low, pen=edge), pg.PlotCurveItem(group.x, group.high, pen=edge),
                                  brush=pg.mkBrush(fill))
        band.setZValue(-10)
        item.addItem(band)
    seeds = []
    if show_seeds:
        faint = pg.mkColor(color)
        faint.setAlpha(SEED_ALPHA)
        for row in group.seeds:
            seed = item.plot(group.x, row, pen=pg.mkPen(faint, width=1))
            seed.setZValue(-5)
            seeds.append(seed)
    line = item.plot(group.x, group.center, pen=pg.mkPen(color, width=2.5), name=group.legend)
    return GroupItems(line, band, seeds)
