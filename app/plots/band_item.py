"""A filled min/max band: what a long series of points looks like when they are too many to draw.

``BandItem.set_band(x, lo, hi)`` takes the columns of ``app.plots.drawing.segmented_band``: each
column spans from its x to the next column's x (a step), a column whose low and high are NaN is a
break (the run did not run there), and a column with nothing after it is one pixel wide.

It paints in screen pixels, not as a polygon: each pixel column of the view is filled from the
lowest to the highest value of the band columns that reach it, at least one pixel high, as one
image. A long noisy run's band is a polygon with a vertex every pixel whose top and bottom edges
zigzag over many rows; Qt's rasteriser fills that in ~20 ms per frame (pyqtgraph's
``FillBetweenItem`` costs the same and rebuilds its fill from two curves' paths on every change),
while the image costs well under a millisecond to build (``bench/band_fill.py``).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

MAX_PIXELS = 8192  # a side of the painted image; larger views are clipped to their visible part anyway


class BandItem(pg.GraphicsObject):
    def __init__(self, color: QColor):
        super().__init__()
        alpha = color.alpha()
        # premultiplied ARGB, as QImage.Format_ARGB32_Premultiplied reads a 32-bit pixel
        r, g, b = (round(c * alpha / 255) for c in (color.red(), color.green(), color.blue()))
        self._pixel = np.uint32((alpha << 24) | (r << 16) | (g << 8) | b)
        self._log_y = False
        self._x = self._lo = self._hi = np.empty(0)
        self._bounds = QRectF()
        self._empty = True

    # --- data ------------------------------------------------------------------------------

    def set_band(self, x: npt.ArrayLike, lo: npt.ArrayLike, hi: npt.ArrayLike) -> None:
        """The band's columns (not ``setData``: that is Qt's per-item data store, ``QGraphicsItem.setData``)."""
        self._x, self._lo, self._hi = (np.asarray(a, dtype=float) for a in (x, lo, hi))
        self._update_bounds()

    def getData(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # noqa: N802
        return self._x, self._lo, self._hi

    def setLogMode(self, x_mode: bool, y_mode: bool) -> None:  # noqa: N802 (PlotItem.setLogMode calls it)
        self._log_y = bool(y_mode)
        self._update_bounds()

    def is_empty(self) -> bool:
        return self._empty

    def _drawn(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self._log_y:
            return self._x, self._lo, self._hi
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._x, np.log10(np.where(self._lo > 0, self._lo, np.nan)), np.log10(np.where(self._hi > 0, self._hi, np.nan))

    def _update_bounds(self) -> None:
        self.prepareGeometryChange()
        x, lo, hi = self._drawn()
        ok = np.isfinite(x) & np.isfinite(lo) & np.isfinite(hi)
        self._empty = not ok.any()
        if self._empty:
            self._bounds = QRectF()
        else:
            left, right = float(x[ok].min()), float(x[ok].max())
            bottom, top = float(lo[ok].min()), float(hi[ok].max())
            self._bounds = QRectF(left, bottom, right - left, top - bottom)
        self.informViewBoundsChanged()
        self.update()

    # --- pyqtgraph and Qt ------------------------------------------------------------------

    def dataBounds(self, ax: int, frac: float = 1.0,  # noqa: N802 (ViewBox autoscale)
                   orthoRange: object = None) -> tuple[float, float] | tuple[None, None]:  # noqa: N803
        if self._empty:
            return None, None
        r = self._bounds
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())

    def boundingRect(self) -> QRectF:  # noqa: N802
        if self._empty:
            return QRectF()
        # a pixel of margin each side: one column, or a flat band, still has an area to paint
        px, py = self.pixelWidth() or 0.0, self.pixelHeight() or 0.0
        return QRectF(self._bounds).adjusted(-px, -py, px, py)

    def paint(self, painter: QPainter, *_args: object) -> None:
        if self._empty:
            return
        tr = painter.transform()
        if tr.m12() != 0 or tr.m21() != 0:  # a view is never rotated; nothing sensible to draw if it is
            return
        area = tr.mapRect(self.boundingRect()).toAlignedRect()
        if painter.hasClipping():
            area = area.intersected(tr.mapRect(painter.clipBoundingRect()).toAlignedRect())
        device = painter.device()
        area = area.intersected(QRectF(0, 0, device.width(), device.height()).toAlignedRect())
        width, height = min(area.width(), MAX_PIXELS), min(area.height(), MAX_PIXELS)
        if width <= 0 or height <= 0:
            return
        x, lo, hi = self._drawn()
        pixels = _band_pixels(x * tr.m11() + tr.m31() - area.left(), lo * tr.m22() + tr.m32() - area.top(),
                              hi * tr.m22() + tr.m32() - area.top(), width, height, self._pixel)
        if pixels is None:
            return
        image = QImage(pixels.data, width, height, width * 4, QImage.Format.Format_ARGB32_Premultiplied)
        painter.save()
        painter.resetTransform()
        painter.drawImage(QPointF(area.left(), area.top()), image)
        painter.restore()


def _band_pixels(x: np.ndarray, y_lo: np.ndarray, y_hi: np.ndarray, width: int, height: int,
                 pixel: np.uint32) -> np.ndarray | None:
    """The band as a ``height`` x ``width`` ARGB image; x and y already in the image's pixels."""
    ok = np.isfinite(x) & np.isfinite(y_lo) & np.isfinite(y_hi)
    idx = np.flatnonzero(ok)
    if not len(idx):
        return None
    # each column reaches the next one's x when that one is drawn too (a step), else one pixel
    nxt = np.minimum(idx + 1, len(x) - 1)
    reaches = (idx + 1 < len(x)) & ok[nxt]
    left = x[idx]
    right = np.where(reaches, x[nxt], left)
    c0 = np.floor(left).astype(np.int64)
    c1 = np.maximum(c0, np.ceil(right).astype(np.int64) - 1)
    c0, c1 = np.clip(c0, 0, width - 1), np.clip(c1, -1, width - 1)
    shown = (c1 >= c0) & (right >= 0) & (left < width)
    if not shown.any():
        return None
    c0, c1 = c0[shown], c1[shown]
    top = np.floor(np.minimum(y_lo[idx], y_hi[idx])[shown])
    bottom = np.ceil(np.maximum(y_lo[idx], y_hi[idx])[shown])
    counts = c1 - c0 + 1
    starts = np.repeat(c0 - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    cols = starts + np.arange(int(counts.sum()))
    col_top = np.full(width, math.inf)
    col_bottom = np.full(width, -math.inf)
    np.minimum.at(col_top, cols, np.repeat(top, counts))
    np.maximum.at(col_bottom, cols, np.repeat(bottom, counts))
    col_bottom = np.maximum(col_bottom, col_top)  # at least one pixel high
    # small ints and in-place steps: the mask is height x width (~400k cells a frame), float compares cost 3x
    col_top = np.clip(col_top, -1, height).astype(np.int16)  # MAX_PIXELS fits; a column with nothing: top past the image
    col_bottom = np.clip(col_bottom, -1, height).astype(np.int16)
    rows = np.arange(height, dtype=np.int16)[:, None]
    inside = rows >= col_top
    inside &= rows <= col_bottom
    image: np.ndarray = inside.view(np.uint8).astype(np.uint32)  # numpy's stubs: view(dtype) is Any
    image *= pixel
    return image
