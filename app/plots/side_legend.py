"""A plot legend that stays in the corner while it is short and moves out beside the plot when it is long.

In the Results tab an 11-entry legend in the view box's corner covered the curves and the baseline's label
("baseline base: 24.30 ± 9.07"). Past ``INSIDE_MAX`` entries the legend becomes an item of the plot's own
layout, right of the view box: the view box gets narrower and nothing is drawn over. It takes as many
columns as the plot's height needs, so a long legend never makes the plot taller than its room, and its names
at most ``LABEL_SHARE`` of the plot's width (a longer one elided, whole on hover), so a narrow plot (Configure shown
beside Results on a laptop) does not push the legend out of its view.

pyqtgraph's own anchor (``addLegend(offset=...)``) moves the legend back into its parent at each geometry
change, which would fight the layout: this legend is placed by hand, at ``OFFSET`` while inside.
"""

from __future__ import annotations

import math
from typing import Any, cast

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QSizePolicy

INSIDE_MAX = 3  # entries drawn over the plot; a longer legend goes beside it
OFFSET = (8, 8)  # from the view box's top left while inside
ROW_PX = 20  # pyqtgraph's legend sample is 20 px high: a row of entries is at least that
ROOM_MARGIN_PX = 4  # the plot's layout margins above and below its rows
# PlotItem's layout: row 2 holds the left axis (0), the view box (1) and the right axis (2), row 3 the x axis; the
# legend takes column 3 of both rows (it may reach down beside the x axis)
LEGEND_CELL = (2, 3, 2, 1)
# the title over the view box and the legend: over the view box alone its width kept the view box from narrowing, and
# a plot of 400 px (Configure beside Results on a laptop) then pushed the legend out of its view
TITLE_CELLS = {False: (0, 1, 1, 1), True: (0, 1, 1, 3)}
LABEL_SHARE = 0.3  # of the plot's width, for the names of one column of the legend beside it
LABEL_MIN_PX = 90
FULL_NAME = 0  # the key of an entry's whole name in its label's item data (QGraphicsItem.data)


def full_name(label: pg.LabelItem) -> str:
    """The whole name of a legend entry whose label may show it elided."""
    name = label.data(FULL_NAME)
    return name if isinstance(name, str) else label.text


class SideLegend(pg.LegendItem):
    """The legend of ``plot_item`` (the one ``plot(name=...)`` adds entries to); ``place()`` after the entries change
    or the plot is resized."""

    def __init__(self, plot_item: pg.PlotItem, **kwargs: Any) -> None:
        super().__init__(offset=None, **kwargs)
        self.plot_item = plot_item
        self.outside = False
        self.setParentItem(plot_item.vb)
        self.setPos(*OFFSET)
        # beside the plot: its own size at the row's top, not stretched over the view box's height
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        plot_item.legend = self
        plot_item.vb.sigResized.connect(self._resized)

    def addItem(self, item: pg.GraphicsItem, name: str) -> None:  # noqa: N802 (pyqtgraph's name)
        super().addItem(item, name)
        self.items[-1][1].setData(FULL_NAME, name)  # the label's text may be elided: the whole name stays with it

    def names(self) -> list[str]:
        """The entries' whole names, in order."""
        return [full_name(label) for _sample, label in self.items]

    def _resized(self, _view_box: object) -> None:
        if self.outside:  # as many columns as the new height needs
            self.place()

    def updateSize(self) -> None:  # noqa: N802 (pyqtgraph's name)
        if self.outside:
            self.updateGeometry()  # the plot's layout gives it its size and place
            return
        super().updateSize()  # sets the geometry at the parent's (0, 0)
        self.setPos(*OFFSET)

    def room_px(self) -> float:
        """The height beside the view box and the x axis: the plot's, less its title (the view box's own height
        grows with a legend taller than it, so it cannot say)."""
        item = self.plot_item
        views = item.scene().views() if item.scene() is not None else []
        height = views[0].height() if views else item.height()  # the item grows past its view with a tall legend
        top = item.getAxis("top")
        return height - item.titleLabel.height() - (top.height() if top.isVisible() else 0) - 2 * ROOM_MARGIN_PX

    def row_px(self) -> float:
        return max([ROW_PX, *(label.minimumHeight() for _sample, label in self.items)])

    def place(self, height_px: float | None = None) -> None:
        """Inside the plot with up to ``INSIDE_MAX`` entries, else beside it in columns of at most ``height_px``
        (the room beside the view box by default)."""
        outside = len(self.items) > INSIDE_MAX
        layout = self.plot_item.layout
        if outside and not self.outside:
            self.outside = True
            layout.addItem(self, *LEGEND_CELL)
            layout.setAlignment(self, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
            self._place_title()
        elif not outside and self.outside:
            self.outside = False
            layout.removeItem(self)
            self.setParentItem(self.plot_item.vb)
            self._place_title()
        # PySide6's stubs say object: it returns (left, top, right, bottom)
        _left, top, _right, bottom = cast(tuple[float, float, float, float], self.layout.getContentsMargins())
        room = (height_px if height_px is not None else self.room_px()) - top - bottom
        rows = max(1, int(room // self.row_px()))
        self.setColumnCount(max(1, math.ceil(len(self.items) / rows)) if outside else 1)
        self._fit_names()
        self.updateSize()

    def _place_title(self) -> None:
        layout, title = self.plot_item.layout, self.plot_item.titleLabel
        layout.removeItem(title)
        layout.addItem(title, *TITLE_CELLS[self.outside])

    def _fit_names(self) -> None:
        """Beside the plot each name at most its share of the plot's width (elided, whole in its tooltip); inside, whole."""
        views = self.plot_item.scene().views() if self.plot_item.scene() is not None else []
        width = views[0].width() if views else self.plot_item.width()
        room = max(LABEL_MIN_PX, LABEL_SHARE * width / max(1, self.columnCount))
        for _sample, label in self.items:
            name = full_name(label)
            font = QFont(label.item.font())
            font.setPointSizeF(float(str(self.opts["labelTextSize"]).removesuffix("pt")))
            text = QFontMetricsF(font).elidedText(name, Qt.TextElideMode.ElideRight, room) if self.outside else name
            if text != label.text:
                label.setText(text)
                label.setToolTip(name if text != name else "")
