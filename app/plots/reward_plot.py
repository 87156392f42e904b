"""Episode reward: each episode a point, a rolling mean line, and eval results."""

from __future__ import annotations

from functools import partial

from app.plots.buffers import rolling_mean_from
from app.plots.live_plot import LivePlot
from app.theme import SERIES_COLORS
from core.run.summary import REWARD_WINDOW

ROLLING_WINDOW = REWARD_WINDOW  # the rolling mean the tables report, drawn over the episodes


class RewardPlot(LivePlot):
    def __init__(self, parent=None):
        super().__init__("Episode reward", "reward", parent=parent)
        self.add_series("episode", "episode", SERIES_COLORS[0], symbol="o", line=False, symbol_size=3)
        self.add_derived("mean", "episode", partial(rolling_mean_from, window=ROLLING_WINDOW),
                         f"mean of {ROLLING_WINDOW}", SERIES_COLORS[1], width=1)
        self.add_series("eval", "eval", SERIES_COLORS[2], symbol="s", symbol_size=7, width=1.0)

    def add_records(self, episodes: list[dict], evals: list[dict]) -> None:
        if episodes:
            self.buffer("episode").extend([r.get("step", 0) for r in episodes], [r.get("t", 0) for r in episodes],
                                          [_num(r.get("reward")) for r in episodes])
        if evals:
            self.buffer("eval").extend([r.get("step", 0) for r in evals], [r.get("t", 0) for r in evals],
                                       [_num(r.get("mean_reward")) for r in evals])


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")
