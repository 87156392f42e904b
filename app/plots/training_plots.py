"""Training speed (steps/s) and the losses SB3 logs in ``train`` records."""

from __future__ import annotations

from app.plots.live_plot import LivePlot
from app.theme import SERIES_COLORS


class SpeedPlot(LivePlot):
    def __init__(self, parent=None):
        super().__init__("Speed", "steps/s", parent=parent)
        self.add_series("fps", "steps/s", SERIES_COLORS[0])

    def add_records(self, progress: list[dict]) -> None:
        rows = [r for r in progress if r.get("fps") is not None]
        if rows:
            self.buffer("fps").extend([r.get("step", 0) for r in rows], [r.get("t", 0) for r in rows],
                                      [float(r["fps"]) for r in rows])


class LossPlot(LivePlot):
    """One curve per ``train/*loss*`` key, created the first time the key appears."""

    def __init__(self, parent=None):
        super().__init__("Losses", "loss", parent=parent)

    def add_records(self, train: list[dict]) -> None:
        columns: dict[str, tuple[list, list, list]] = {}
        for rec in train:
            for key, value in rec.items():
                if "loss" not in key or not isinstance(value, (int, float)):
                    continue
                col = columns.setdefault(key, ([], [], []))
                col[0].append(rec.get("step", 0))
                col[1].append(rec.get("t", 0))
                col[2].append(float(value))
        for key, (steps, times, values) in columns.items():
            if not self.has_series(key):
                color = SERIES_COLORS[len(self.series_keys()) % len(SERIES_COLORS)]
                self.add_series(key, key.removeprefix("train/"), color)
            self.buffer(key).extend(steps, times, values)
