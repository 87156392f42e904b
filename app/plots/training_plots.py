"""Training speed (steps/s), and one small chart per scalar SB3 logs (``train`` records)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.plots.live_plot import LivePlot
from app.theme import SERIES_COLORS


class SpeedPlot(LivePlot):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Speed", "steps/s", unit="steps/s", parent=parent, x_label=False)  # the Monitor's "x:" box names it
        self.add_series("fps", "steps/s", SERIES_COLORS[0])
        self.legend.setVisible(False)  # the title names it; a legend box would only hide data


class ScalarPlot(LivePlot):
    """One logged scalar (``train/value_loss`` ...) against timesteps or wall time."""

    def __init__(self, key: str, color: str, parent: QWidget | None = None) -> None:
        super().__init__(key, "", parent=parent, x_label=False)  # the Monitor's "x:" box names it
        self.key = key
        self.add_series("value", key.split("/", 1)[-1], color)
        self.legend.setVisible(False)  # the title names the one series
        self.setMinimumHeight(120)
