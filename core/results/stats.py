"""Statistics across seeds: mean ± standard error, confidence intervals, IQM, tests against a baseline (no Qt, no torch).

rliable (Agarwal et al. 2021) is the reference for these estimators, but it pulls matplotlib, seaborn,
statsmodels, arch and pandas (~100 MB) into a desktop install; its estimators are a few lines of scipy each,
so they are computed here with scipy, the way rliable computes them:

- the **IQM** (interquartile mean) is ``scipy.stats.trim_mean(x, 0.25)``: the mean of the middle half
  (with 2 or 3 runs nothing is cut: it is the mean);
- confidence intervals of the IQM and of the probability of improvement are **percentile bootstraps**
  (rliable's default method) by ``scipy.stats.bootstrap``, ``RESAMPLES`` resamples from a fixed seed
  (``SEED``) so that a table is the same each time it is made;
- the **stratified bootstrap** of an aggregate over several envs is ``scipy.stats.bootstrap`` over one sample
  per env with ``paired=False``: each env's runs are resampled within that env (rliable's StratifiedBootstrap);
- the **probability of improvement** P(X > Y) (ties count half) is the Mann-Whitney U statistic of X against Y
  over ``len(X) * len(Y)`` (``scipy.stats.mannwhitneyu``), as rliable's ``probability_of_improvement``;
- the **95 % CI of the mean** is the t-interval (mean ± t(0.975, n-1) · se), se = sample std / sqrt(n);
- the test against a baseline is **Welch's t-test** (``scipy.stats.ttest_ind(equal_var=False)``); a baseline
  of one run (a random or constant policy, measured by all its episodes) has no spread across seeds, so the
  group is tested against its figure with the one-sample t-test (``scipy.stats.ttest_1samp``).

A difference is marked significant where its 95 % CI (Welch's, or the one-sample t-interval) excludes 0,
which is the same rule as p < 0.05 for these two-sided tests. One run has no spread: no interval, said so; a group
of one run against the baseline has its difference only (no test, no probability of improvement).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy
from scipy import stats

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95
BOOTSTRAP_METHOD = "percentile"
TRIM = 0.25  # the IQM cuts a quarter at each end
Interval = tuple[float, float]
Values = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class Aggregate:
    """A figure over ``n`` runs: mean, its standard error and 95 % t-interval, the IQM and its bootstrap interval.
    ``note`` says why an interval is missing (one run)."""

    n: int
    mean: float | None
    se: float | None = None
    ci95: Interval | None = None
    iqm: float | None = None
    iqm_ci95: Interval | None = None
    note: str = ""


@dataclass(frozen=True)
class Comparison:
    """A group against the baseline group: the difference of means, in % of |baseline|, its 95 % CI and p-value,
    the probability of improvement with its bootstrap CI, and whether the CI of the difference excludes 0."""

    delta: float
    pct: float | None
    delta_ci95: Interval | None
    p_value: float | None
    test: str  # "Welch's t-test" | "one-sample t-test against the baseline's figure" | why none
    prob_improvement: float | None
    prob_improvement_ci95: Interval | None
    significant: bool | None  # None: no test (too few runs, or no spread)


def _clean(values: Values) -> np.ndarray:
    x = np.asarray([float(v) for v in values], dtype=float)
    kept: np.ndarray = x[np.isfinite(x)]
    return kept


def iqm(values: Values) -> float | None:
    """The interquartile mean (rliable's ``aggregate_iqm``): ``trim_mean(x, 0.25)``."""
    x = _clean(values)
    return float(stats.trim_mean(x, TRIM)) if x.size else None


def _iqm_axis(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(stats.trim_mean(x, TRIM, axis=axis))


def bootstrap_ci(samples: Sequence[np.ndarray], statistic: Callable[..., np.ndarray]) -> Interval | None:
    """The percentile-bootstrap 95 % interval of ``statistic(*samples, axis=-1)``, each sample resampled on its
    own (``paired=False``: stratified when there are several); None when a sample has fewer than 2 values."""
    if not samples or any(s.size < 2 for s in samples):
        return None
    with warnings.catch_warnings():  # identical values: a degenerate (zero-width) interval is the right answer
        warnings.simplefilter("ignore")
        res = stats.bootstrap(tuple(samples), statistic, n_resamples=RESAMPLES, confidence_level=LEVEL,
                              method=BOOTSTRAP_METHOD, paired=False, vectorized=True, axis=-1,
                              random_state=np.random.default_rng(SEED))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None


def aggregate(values: Values) -> Aggregate:
    """Mean ± standard error (sample std / sqrt(n)), the t-interval of the mean, the IQM and its bootstrap CI."""
    x = _clean(values)
    n = int(x.size)
    if n == 0:
        return Aggregate(0, None, note="no run has this figure")
    mean = float(x.mean())
    if n == 1:
        return Aggregate(1, mean, iqm=mean, note="one run: no spread, no interval")
    se = float(x.std(ddof=1) / math.sqrt(n))
    half = float(stats.t.ppf(0.5 + LEVEL / 2, n - 1)) * se
    return Aggregate(n, mean, se, (mean - half, mean + half), iqm(x), bootstrap_ci([x], _iqm_axis),
                     "" if n > 3 else f"{n} runs: wide intervals")


def probability_of_improvement(x: Values, y: Values) -> float | None:
    """P(X > Y) + P(X = Y) / 2 over every pair: the Mann-Whitney U of ``x`` against ``y`` / (len(x) · len(y))."""
    a, b = _clean(x), _clean(y)
    if not a.size or not b.size:
        return None
    return float(stats.mannwhitneyu(a, b, method="asymptotic").statistic) / (a.size * b.size)


def _poi_axis(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    u = np.asarray(stats.mannwhitneyu(x, y, axis=axis, method="asymptotic").statistic)
    out: np.ndarray = u / (x.shape[axis] * y.shape[axis])
    return out


def _poi_ci(a: np.ndarray, b: np.ndarray) -> Interval | None:
    if a.size >= 2 and b.size >= 2:
        return bootstrap_ci([a, b], _poi_axis)
    if a.size >= 2 and b.size == 1:  # a baseline of one figure: only the group's runs are resampled
        fixed = float(b[0])
        return bootstrap_ci([a], lambda s, axis=-1: (s > fixed).mean(axis=axis) + 0.5 * (s == fixed).mean(axis=axis))
    return None


def compare(values: Values, baseline: Values) -> Comparison | None:
    """``values`` (a group's runs) against ``baseline`` (the baseline group's); None when either has no run."""
    a, b = _clean(values), _clean(baseline)
    if not a.size or not b.size:
        return None
    base = float(b.mean())
    delta = float(a.mean()) - base
    pct = 100.0 * delta / abs(base) if base != 0 else None
    ci, p, test = _difference_test(a, b)
    significant = None if ci is None else not (ci[0] <= 0.0 <= ci[1])
    if a.size < 2:
        # one run against the baseline's runs is a rank, not a probability of improvement: a table showed it as
        # "P(improvement) 1.00" beside "no test: the group has one run". The difference of the means stays.
        return Comparison(delta, pct, None, None, test, None, None, None)
    return Comparison(delta, pct, ci, p, test, probability_of_improvement(a, b), _poi_ci(a, b), significant)


def _difference_test(a: np.ndarray, b: np.ndarray) -> tuple[Interval | None, float | None, str]:
    """(95 % CI of mean(a) - mean(b), p-value, the test's name or why there is none)."""
    if a.size < 2:
        return None, None, "no test: the group has one run"
    if b.size == 1:
        if np.ptp(a) == 0:  # no t-test; the probability of improvement is still measured ("no test" would deny it)
            return None, None, "no t-test: the group's runs have no spread"
        res = stats.ttest_1samp(a, float(b[0]))
        lo, hi = res.confidence_interval(LEVEL)
        return (float(lo) - float(b[0]), float(hi) - float(b[0])), float(res.pvalue), \
            "one-sample t-test against the baseline's figure"
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return None, None, "no t-test: neither group's runs have any spread"
    res = stats.ttest_ind(a, b, equal_var=False)
    lo, hi = res.confidence_interval(LEVEL)
    return (float(lo), float(hi)), float(res.pvalue), "Welch's t-test"


def stratified_iqm(samples: Sequence[Values]) -> tuple[float | None, Interval | None]:
    """The IQM of every run of every env together, and its stratified-bootstrap 95 % CI (each env's runs
    resampled within that env; None when an env has fewer than 2 runs)."""
    arrays = [_clean(s) for s in samples]
    arrays = [s for s in arrays if s.size]
    if not arrays:
        return None, None

    def pooled(*parts: np.ndarray, axis: int = -1) -> np.ndarray:
        return _iqm_axis(np.concatenate(parts, axis=axis), axis)

    return iqm(np.concatenate(arrays).tolist()), bootstrap_ci(arrays, pooled)


def performance_profile(samples: Sequence[Values], taus: Sequence[float]) -> list[float]:
    """For each tau, the fraction of runs with a score above tau, averaged over the envs (rliable's score
    distribution: each env weighs the same, whatever its number of runs)."""
    arrays = [a for a in (_clean(s) for s in samples) if a.size]
    if not arrays:
        return [math.nan for _ in taus]
    return [float(np.mean([(a > tau).mean() for a in arrays])) for tau in taus]


def library_versions() -> dict[str, str]:
    """The versions behind the numbers: scipy, numpy and rlpanel (a footer names them)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("rlpanel")
    except PackageNotFoundError:  # a source checkout that was never installed
        own = "unknown"
    return {"scipy": scipy.__version__, "numpy": np.__version__, "rlpanel": own}
