"""Episode reward: the episodes (a min/max band of them on a long run), their rolling mean, evals.

While at most ``MAX_SYMBOLS`` episodes are in view each is a point; past that they are a band
from the lowest to the highest reward of each pixel column, so a long noisy run reads as the one
band it is. The rolling mean of ``REWARD_WINDOW`` episodes is the mean the tables report; the
smoothing slider adds TensorBoard's EMA of the episodes. An aggregate of many episodes (a fast
env's, ``core.run.episodes``) is three points: its mean (weighing its count in the rolling mean),
its lowest and its highest reward (weighing nothing: they are the points and the band). The EMA
smooths points as they are.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from app.plots.buffers import weighted_rolling_mean_from
from app.plots.live_plot import LivePlot
from app.theme import SERIES_COLORS
from core.run.cache.columns import Columns
from core.run.episodes import REWARD_WINDOW

ROLLING_WINDOW = REWARD_WINDOW  # the rolling mean the tables report, drawn over the episodes


class WindowMean:
    """The rolling mean of ``window`` episodes over weighted points (an aggregate record's mean
    counts as its episodes, its extremes not at all)."""

    weighted = True

    def __init__(self, window: int):
        self.window = window

    def __call__(self, values: np.ndarray, start: int, weights: np.ndarray) -> np.ndarray:
        return weighted_rolling_mean_from(values, weights, start, self.window)


class RewardPlot(LivePlot):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Episode reward", "reward", parent=parent)
        # top left, in three columns (two short rows): a learning curve starts low at the left and
        # rises, and the newest episodes at the right are what a user watches
        self.legend.setOffset((8, 8))
        self.legend.setColumnCount(3)
        self.add_series("episode", "episode", SERIES_COLORS[0], symbol="o", line=False, symbol_size=3, band=True)
        self.add_derived("mean", "episode", WindowMean(ROLLING_WINDOW),
                         f"mean of {ROLLING_WINDOW}", SERIES_COLORS[1], width=1)
        self.add_series("eval", "eval", SERIES_COLORS[2], symbol="s", symbol_size=7, width=1.0)

    def set_smoothing(self, weight: float, keys: list[str] | None = None) -> None:
        super().set_smoothing(weight, ["episode"] if keys is None else keys)

    def add_columns(self, episodes: Columns | None, evals: Columns | None, weights: np.ndarray | None = None) -> None:
        """``(steps, times, values)`` arrays of episode rewards and of eval means; ``weights``: the
        episodes each reward point stands for (None: one each)."""
        if episodes is not None:
            steps, times, values = episodes
            self.buffer("episode").extend(steps, times, values, weights)
        if evals is not None:
            self.buffer("eval").extend(*evals)
