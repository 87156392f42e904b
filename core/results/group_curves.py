"""One reward curve per group of seeds: the seeds' curves on a common x grid, their mean (or IQM) and a 95 % band.

Each seed's curve (``core.results.curves.reward_curve``: the rolling mean of its episode rewards) is
linearly interpolated (``np.interp``) onto one grid, and each grid point is aggregated across the seeds.

- **The grid covers only the x every seed reached**: from the largest first x to the smallest last x, so
  every point is an aggregate of all ``n`` seeds (``GroupCurve.n_per_point`` is ``n`` everywhere). A group
  whose seeds stop at different steps is cut where the shortest seed ends (``GroupCurve.cut_at``) rather
  than averaging fewer and fewer survivors at the end, where the band would widen and the mean jump with
  every seed that drops out; the view says where and why it cut.
- **Grid points**: the seeds' own x values inside that range (so at a seed's own step its value is exact),
  thinned evenly to at most ``MAX_POINTS`` (a 24 h run logs tens of thousands of episodes; 500 points are
  more than a plot's width needs, and the bootstrap's cost grows with them).
- **Aggregate**: the mean, or the IQM (interquartile mean: the mean of the middle half of the seeds,
  ``scipy.stats.trim_mean(x, 0.25)``, as rliable computes it; robust to one seed that diverged).
- **Band**: a 95 % percentile bootstrap confidence interval of that aggregate across seeds,
  ``scipy.stats.bootstrap`` with 1,000 resamples of the seeds, vectorised over every grid point at once
  (data of shape ``(n_seeds, n_grid)``, ``axis=0``), from a fixed random seed so the same runs draw the same
  band. Each resample draws whole seeds, the same draw for every grid point: a band of curves, not of
  unrelated points. 5 seeds x 500 points: ~0.04 s (mean), 0.2-0.4 s (IQM: trim_mean sorts each resample); a
  group of 5 seeds of ~48,000 episodes each, from their curves to the band: 0.2 s (mean), 0.5 s (IQM).
- One seed: its curve, no band (a bootstrap of one value says nothing).
- **A seed that ended short** (crashed, stopped or failed before its budget) is left out and listed
  (``GroupCurve.left_out``), unless asked to include it: kept, it cut every seed's curve at its last step and
  pulled the mean down (issue 44). A seed still training stays in: the curve is the group's so far.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from core.results.curves import RewardCurve, reward_curve
from core.results.grouping import GroupBy, group_runs
from core.run.states import TERMINAL
from core.run.status import read_status

Statistic = Literal["mean", "iqm"]
XMode = Literal["step", "time"]
STATISTICS: tuple[Statistic, ...] = ("mean", "iqm")
MAX_POINTS = 500
RESAMPLES = 1000
CONFIDENCE = 0.95
BOOTSTRAP_SEED = 0
Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class GroupCurve:
    """A group's aggregate curve: ``center`` (mean or IQM) with its band ``low``..``high`` (None for one seed)
    over ``x``; ``seeds`` holds each seed's curve on the same grid (one row per run in ``run_ids``)."""

    key: str
    label: str
    statistic: Statistic
    run_ids: tuple[str, ...]
    x: Array
    center: Array
    low: Array | None
    high: Array | None
    seeds: Array
    cut_at: float | None  # where the shortest seed ends, when a longer one went on past it; else None
    skipped: tuple[str, ...] = ()  # runs of the group with no finished episode yet (not in the aggregate)
    left_out: tuple[str, ...] = ()  # runs that ended short of their budget (crashed, stopped, failed): not in it

    @property
    def n(self) -> int:
        return len(self.run_ids)

    @property
    def n_per_point(self) -> npt.NDArray[np.int64]:
        """How many seeds each grid point aggregates: all of them, the grid being their common range."""
        return np.full(len(self.x), self.n, dtype=np.int64)

    @property
    def legend(self) -> str:
        return f"{self.label} (n={self.n}" + (f"; {len(self.left_out)} unfinished left out)" if self.left_out else ")")


def curve_xy(curve: RewardCurve, x_mode: XMode) -> tuple[Array, Array]:
    """A curve's finite (x, y) points against timesteps (``step``) or seconds since its start (``time``)."""
    x = np.asarray(curve.steps if x_mode == "step" else curve.seconds, dtype=np.float64)
    y = np.asarray(curve.mean_reward, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def common_grid(xs: Sequence[Array], max_points: int = MAX_POINTS) -> Array:
    """The x values of all ``xs`` that every one of them covers (largest first to smallest last), thinned
    evenly to at most ``max_points`` (the first and last kept). Empty when they share no range."""
    if not xs or any(len(x) == 0 for x in xs):
        return np.empty(0)
    lo, hi = max(float(x.min()) for x in xs), min(float(x.max()) for x in xs)
    if lo > hi:
        return np.empty(0)
    union = np.unique(np.concatenate(xs))
    grid = union[(union >= lo) & (union <= hi)]
    if len(grid) > max_points:
        grid = grid[np.unique(np.round(np.linspace(0, len(grid) - 1, max_points)).astype(np.int64))]
    return grid


def interpolate(xs: Sequence[Array], ys: Sequence[Array], grid: Array) -> Array:
    """Each curve linearly interpolated at ``grid``: shape ``(len(xs), len(grid))``."""
    return np.array([np.interp(grid, x, y) for x, y in zip(xs, ys, strict=True)], dtype=np.float64).reshape(len(xs), len(grid))


def iqm(values: Array, axis: int = 0) -> Array:
    """The interquartile mean along ``axis``: ``scipy.stats.trim_mean`` cutting a quarter each side (rliable's IQM)."""
    return np.asarray(stats.trim_mean(values, 0.25, axis=axis), dtype=np.float64)


def _mean(values: Array, axis: int = 0) -> Array:
    return np.asarray(np.mean(values, axis=axis), dtype=np.float64)


AGGREGATES: dict[Statistic, Callable[..., Array]] = {"mean": _mean, "iqm": iqm}


def bootstrap_band(seeds: Array, statistic: Statistic = "mean", resamples: int = RESAMPLES,
                   seed: int = BOOTSTRAP_SEED) -> tuple[Array, Array]:
    """The 95 % percentile bootstrap interval of ``statistic`` across the rows of ``seeds`` (n_seeds, n_grid),
    for every column at once; the same ``seed`` gives the same band."""
    rng = np.random.default_rng(seed)
    # scipy 1.15 renamed random_state to rng (SPEC 7); the old name may go in a later release
    key = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"
    options: dict[str, Any] = {key: rng}
    with np.errstate(invalid="ignore"):  # a column where every seed agrees: a zero-width band, not a warning
        result = stats.bootstrap((seeds,), AGGREGATES[statistic], axis=0, vectorized=True, n_resamples=resamples,
                                 confidence_level=CONFIDENCE, method="percentile", **options)
    ci = result.confidence_interval
    return np.asarray(ci.low, dtype=np.float64), np.asarray(ci.high, dtype=np.float64)


def group_curve(key: str, label: str, curves: Sequence[RewardCurve], statistic: Statistic = "mean",
                x_mode: XMode = "step", max_points: int = MAX_POINTS, resamples: int = RESAMPLES) -> GroupCurve | None:
    """The aggregate of ``curves`` (a group's seeds); None when no seed has a finished episode yet."""
    if statistic not in AGGREGATES:
        raise ValueError(f"statistic {statistic!r}: use one of {', '.join(STATISTICS)}")
    points = [(c.run_id, *curve_xy(c, x_mode)) for c in curves]
    used = [p for p in points if len(p[1])]
    if not used:
        return None
    xs, ys = [p[1] for p in used], [p[2] for p in used]
    grid = common_grid(xs, max_points)
    seeds = interpolate(xs, ys, grid)
    ends = [float(x.max()) for x in xs]
    cut_at = min(ends) if max(ends) > min(ends) else None
    if len(used) == 1 or not len(grid):
        center, low, high = (seeds[0] if len(used) == 1 else AGGREGATES[statistic](seeds)), None, None
    else:
        center = AGGREGATES[statistic](seeds)
        low, high = bootstrap_band(seeds, statistic, resamples)
    return GroupCurve(key=key, label=label, statistic=statistic, run_ids=tuple(p[0] for p in used), x=grid,
                      center=center, low=low, high=high, seeds=seeds, cut_at=cut_at,
                      skipped=tuple(p[0] for p in points if not len(p[1])))


def group_curves(run_dirs: Sequence[Path], curves: dict[Path, RewardCurve] | None = None, by: GroupBy = "group",
                 statistic: Statistic = "mean", x_mode: XMode = "step",
                 include_unfinished: bool = False) -> list[GroupCurve]:
    """One aggregate per group of ``run_dirs`` (``core.results.grouping.group_runs``), in the groups' order;
    ``curves``: the runs' curves when already read (the window's loader has them), else each is read here.
    A run that ended short of its budget is left out (``left_out``) unless ``include_unfinished``."""
    known = {Path(p): c for p, c in (curves or {}).items()}
    out = []
    for group in group_runs([Path(p) for p in run_dirs], by):
        short = set() if include_unfinished else {p for p in group.runs if ended_short(p)}
        members = [known[p] if p in known else reward_curve(p) for p in group.runs if p not in short]
        curve = group_curve(group.key, group.label, members, statistic, x_mode)
        if curve is not None:
            out.append(replace(curve, left_out=tuple(p.name for p in group.runs if p in short)))
    return out


def ended_short(run_dir: Path) -> bool:
    """The run ended without finishing: crashed, stopped or failed (a run still training has not ended)."""
    state = read_status(run_dir).state
    return state in TERMINAL and state != "finished"
