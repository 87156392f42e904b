"""Episodes in ``metrics.jsonl``: one record each while they come slowly, aggregates past a rate.

An env with episodes of a few steps plays hundreds a second; one record each would grow the file
without bound (~18 MiB an hour at 1,000 steps/s). The writer (``EpisodeLimiter``) keeps one
``episode`` record per episode while episodes come at most ``EPISODES_PER_S`` a second, averaged
over ``EPISODE_WINDOW_S`` (a token bucket); a flush's episodes past that become one ``episodes``
record (``core.run.records.episodes``: count, mean/std/min/max reward, mean/min/max length, the
step range, the measures' means). So the episode records of a second of training are at most
``EPISODES_PER_S`` single records (on average) plus one aggregate per flush, whatever the env.

Every reader takes both forms through ``episode_groups``: an ``EpisodeGroup`` per record, a single
episode being a group of one, and the means here weight a group by its count. The window of the
last ``REWARD_WINDOW`` episodes takes the part of a group it needs at the group's mean (and
spread): exact when the window starts at a record's edge, else within that one aggregate.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from core.run import records

REWARD_WINDOW = 100  # episodes in the "mean reward" of SB3's logger, our tables and plots
# Single episode records a second, on average, before episodes are aggregated: at 10 a second a 24 h
# run's metrics.jsonl at the bound (a train record every 10 s) was 109 MiB and took the window 14.6 s
# of CPU to read into columns (bench/night_files.py --open-day); at 2, 44 MiB and 5.2 s. An aggregate
# keeps the band and the mean right.
EPISODES_PER_S = 2.0
EPISODE_WINDOW_S = 300.0  # ... averaged over five minutes (a burst of 600 episodes still gets a record each)


class EpisodeLimiter:
    """Decides, per flush, whether its episodes are written one record each or as one aggregate."""

    def __init__(self, rate: float = EPISODES_PER_S, window_s: float = EPISODE_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.capacity = rate * window_s
        self.tokens = self.capacity
        self.clock = clock
        self._last: float | None = None
        self.aggregated = 0  # episodes written inside aggregates so far

    def take(self, episodes: list[dict[str, Any]], now: float | None = None) -> list[dict[str, Any]]:
        """The records to write for ``episodes`` (episode records of one flush, oldest first)."""
        now = self.clock() if now is None else now
        if self._last is not None:
            self.tokens = min(self.capacity, self.tokens + max(now - self._last, 0.0) * self.rate)
        self._last = now
        if any("truncated" in e for e in episodes):  # a cut-short episode keeps its record, and its reason, always
            cut = [e for e in episodes if "truncated" in e]
            rest = [e for e in episodes if "truncated" not in e]
            return sorted(self.take(rest, now) + cut, key=lambda r: int(r["step"])) if rest else cut
        singles = min(len(episodes), int(self.tokens))
        self.tokens -= singles
        if singles == len(episodes):
            return episodes
        # the first ones while tokens last (a first flush after a slow start still has single records), the rest one aggregate
        rest = episodes[singles:]
        self.aggregated += len(rest)
        return episodes[:singles] + [records.episodes(rest)]


@dataclass(frozen=True)
class EpisodeGroup:
    """One episode record (``count`` 1) or one aggregate, as the readers see them."""

    step: int  # of the last episode
    t: float
    count: int
    reward: float  # mean
    reward_std: float  # 0 for one episode
    reward_min: float
    reward_max: float
    length: float  # mean
    measures: dict[str, float]  # means of the env's own measures (env.info_keys)
    step_first: int = 0


def _measures(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        return {}
    return {str(k): float(v) for k, v in raw.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}


def group_of(rec: dict[str, Any]) -> EpisodeGroup | None:
    """The group a well-formed record stands for; None for other kinds."""
    kind = rec.get("kind")
    if kind == records.EPISODE:
        r = float(rec["reward"])
        return EpisodeGroup(int(rec["step"]), float(rec["t"]), 1, r, 0.0, r, r, float(rec["length"]),
                            _measures(rec.get("m")), int(rec["step"]))
    if kind == records.EPISODES:
        return EpisodeGroup(int(rec["step"]), float(rec["t"]), int(rec["n"]), float(rec["reward"]),
                            float(rec.get("reward_std", 0.0)), float(rec["reward_min"]), float(rec["reward_max"]),
                            float(rec["length"]), _measures(rec.get("m")), int(rec.get("step_first", rec["step"])))
    return None


def episode_groups(recs: Iterable[dict[str, Any]]) -> list[EpisodeGroup]:
    """The episodes among well-formed ``recs``, single and aggregated, in file order."""
    return [g for g in map(group_of, recs) if g is not None]


def episode_count(groups: Iterable[EpisodeGroup]) -> int:
    return sum(g.count for g in groups)


def last_window(groups: list[EpisodeGroup], window: int = REWARD_WINDOW) -> list[tuple[EpisodeGroup, float]]:
    """The last ``window`` episodes as (group, weight): whole groups from the end, the oldest one
    in part (its weight is the episodes of it the window still needs)."""
    out: list[tuple[EpisodeGroup, float]] = []
    need = float(window)
    for g in reversed(groups):
        if need <= 0:
            break
        w = min(float(g.count), need)
        out.append((g, w))
        need -= w
    out.reverse()
    return out


def weighted_mean(pairs: list[tuple[EpisodeGroup, float]]) -> float | None:
    total = sum(w for _, w in pairs)
    return sum(g.reward * w for g, w in pairs) / total if total > 0 else None


def weighted_std(pairs: list[tuple[EpisodeGroup, float]]) -> float | None:
    """The population standard deviation of the episodes the pairs stand for (each group's own spread kept)."""
    total = sum(w for _, w in pairs)
    mean = weighted_mean(pairs)
    if mean is None or total <= 0:
        return None
    second = sum(w * (g.reward_std ** 2 + g.reward ** 2) for g, w in pairs) / total
    return math.sqrt(max(second - mean * mean, 0.0))


def measure_means(pairs: list[tuple[EpisodeGroup, float]]) -> dict[str, float]:
    """The mean of each env measure over the episodes that reported it (an aggregate counts as its count)."""
    sums: dict[str, list[float]] = {}
    for g, w in pairs:
        for key, value in g.measures.items():
            acc = sums.setdefault(key, [0.0, 0.0])
            acc[0] += value * w
            acc[1] += w
    return {key: s / n for key, (s, n) in sums.items() if n > 0}


def window_means(groups: list[EpisodeGroup], window: int = REWARD_WINDOW) -> list[tuple[float, int]]:
    """(mean of the last ``window`` episodes, episodes so far) at the end of each group; the mean
    over fewer at the start. O(n log n): cumulative sums, the window's start found by bisection and
    a group cut there counted at its mean."""
    cum_n: list[float] = [0.0]
    cum_s: list[float] = [0.0]
    out: list[tuple[float, int]] = []
    for g in groups:
        cum_n.append(cum_n[-1] + g.count)
        cum_s.append(cum_s[-1] + g.reward * g.count)
        hi_n = cum_n[-1]
        lo_n = max(hi_n - window, 0.0)
        j = bisect.bisect_right(cum_n, lo_n) - 1  # the group holding the window's first episode starts at cum_n[j]
        j = min(j, len(groups) - 1)
        part = lo_n - cum_n[j]
        mean_j = (cum_s[j + 1] - cum_s[j]) / (cum_n[j + 1] - cum_n[j]) if cum_n[j + 1] > cum_n[j] else 0.0
        lo_s = cum_s[j] + part * mean_j
        out.append(((cum_s[-1] - lo_s) / (hi_n - lo_n) if hi_n > lo_n else g.reward, int(hi_n)))
    return out
