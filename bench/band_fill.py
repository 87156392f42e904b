"""The reward band drawn two ways, side by side: pyqtgraph's FillBetweenItem over two edge curves
(what rlpanel drew before) against app.plots.band_item.BandItem (one path, built once per set_band).

Each frame gives both plots a new band of the same columns (a long run's min/max columns with a
break where the run was stopped), then renders the plot (``grab()``); frames alternate between
the two in interleaved pairs, and the ratio is the median of the pairs' ratios (this machine is
shared and noisy). CPU time per frame is printed beside wall time.

    QT_QPA_PLATFORM=offscreen python bench/band_fill.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

COLUMNS = 800  # ~one per pixel column of a wide reward plot
PAIRS = 200


def columns(rng, shift: float):
    import numpy as np

    x = np.arange(COLUMNS, dtype=float) * 1000.0
    mid = 200 + 150 * np.tanh(x / 2e5) + shift
    lo = mid - rng.uniform(50, 150, COLUMNS)
    hi = mid + rng.uniform(50, 150, COLUMNS)
    for a in (x, lo, hi):
        a[COLUMNS // 2] = np.nan  # a stop and resume
    return x, lo, hi


def main() -> int:
    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QApplication

    from app.plots.band_item import BandItem

    app = QApplication.instance() or QApplication([])
    fill = QColor("#4c72b0")
    fill.setAlpha(90)

    old = pg.PlotWidget()
    edge = pg.mkPen(fill, width=1)
    lower, upper = old.plot(pen=edge, connect="finite"), old.plot(pen=edge, connect="finite")
    old.addItem(pg.FillBetweenItem(lower, upper, brush=pg.mkBrush(fill)), ignoreBounds=True)

    new = pg.PlotWidget()
    band = BandItem(fill)
    new.addItem(band)
    for w in (old, new):
        w.resize(1200, 400)
        w.show()
    app.processEvents()

    def draw_old(x, lo, hi) -> None:
        lower.blockSignals(True)  # as rlpanel did: the fill rebuilt once, after the second edge
        lower.setData(x, lo)
        lower.blockSignals(False)
        upper.setData(x, hi)
        old.grab()

    def draw_new(x, lo, hi) -> None:
        band.set_band(x, lo, hi)
        new.grab()

    rng = np.random.default_rng(0)
    times: dict[str, list[tuple[float, float]]] = {"FillBetweenItem": [], "BandItem": []}
    for i in range(PAIRS):
        data = columns(rng, float(i % 7))
        order = [("FillBetweenItem", draw_old), ("BandItem", draw_new)]
        if i % 2:
            order.reverse()
        for name, draw in order:
            wall, cpu = time.perf_counter(), time.process_time()
            draw(*data)
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    ratios = [o[0] / n[0] for o, n in zip(times["FillBetweenItem"], times["BandItem"], strict=True)]
    for name, t in times.items():
        print(f"{name:16s} median {statistics.median(w for w, _ in t) * 1000:6.2f} ms wall, "
              f"{statistics.median(c for _, c in t) * 1000:6.2f} ms CPU per frame ({COLUMNS} columns, set + render)")
    print(f"FillBetweenItem / BandItem: median of {PAIRS} paired ratios {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
