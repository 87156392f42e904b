"""The summary across envs of a group table whose groups span several envs (rliable's aggregate, with scipy).

Each run's figure is normalised by its env: ``(score - baseline) / (reference - baseline)`` when the user gives
a reference score for the env (``--reference CartPole-v1=500``: 0 is the baseline, 1 the reference), else
``(score - baseline) / |baseline|`` (the change against the baseline as a fraction: 1.0 is +100 %), the
baseline being the mean of the env's baseline group. An env without a baseline group (or whose baseline is 0
with no reference) is left out, and the summary says so.

Runs are pooled by algorithm across the envs (a baseline's own groups are its zero, not a method): for each,
the IQM of its normalised scores with a stratified-bootstrap 95 % CI (each env's runs resampled within that env,
``core.results.stats.stratified_iqm``), and its performance profile: the fraction of runs whose normalised score
is above tau, for each tau of a grid, averaged over the envs (``core.results.stats.performance_profile``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.results.group_table import GroupTable
from core.results.stats import Interval, performance_profile, stratified_iqm
from core.results.table import Column

TAUS = 41  # points of the profile's grid
COLUMNS = [Column("method", "Algorithm"), Column("envs", "Envs"), Column("n", "Runs", "", "int"),
           Column("iqm", "IQM of normalised score", "", "float", 3), Column("iqm_lo", "95% CI low", "", "float", 3),
           Column("iqm_hi", "95% CI high", "", "float", 3)]


@dataclass
class MethodSummary:
    """One algorithm across the envs: its runs' normalised scores per env, their IQM and stratified-bootstrap CI."""

    method: str
    scores: dict[str, list[float]]  # env -> normalised scores of its runs
    iqm: float | None
    iqm_ci95: Interval | None
    profile: list[float]
    marked: bool = False
    is_baseline: bool = False

    @property
    def n(self) -> int:
        return sum(len(v) for v in self.scores.values())

    def value(self, key: str) -> Any:
        cells = {"envs": ", ".join(self.scores), "iqm_lo": self.iqm_ci95[0] if self.iqm_ci95 else None,
                 "iqm_hi": self.iqm_ci95[1] if self.iqm_ci95 else None}
        return cells[key] if key in cells else getattr(self, key)

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "n": self.n, "scores": self.scores, "iqm": self.iqm,
                "iqm_ci95": list(self.iqm_ci95) if self.iqm_ci95 else None, "profile": self.profile}


@dataclass
class MultiEnvSummary:
    normalisation: dict[str, str]  # env -> how its scores were normalised, in words
    rows: list[MethodSummary]
    taus: list[float]
    left_out: list[str] = field(default_factory=list)  # envs left out, and why
    columns: list[Column] = field(default_factory=lambda: list(COLUMNS))

    @property
    def notes(self) -> list[str]:
        how = "; ".join(f"{env}: {text}" for env, text in self.normalisation.items())
        out = [f"Normalised scores: {how}. IQM across envs with a stratified bootstrap 95 % CI (each env's runs "
               "resampled within that env)."]
        if self.left_out:
            out.append(f"Left out: {'; '.join(self.left_out)}.")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"normalisation": self.normalisation, "left_out": self.left_out, "taus": self.taus,
                "methods": [r.to_json() for r in self.rows]}


def parse_references(items: list[str] | None) -> dict[str, float]:
    """``["CartPole-v1=500", ...]`` -> {env: score}; ValueError names a malformed one and the form."""
    out: dict[str, float] = {}
    for item in items or []:
        env, sep, score = item.rpartition("=")
        try:
            value: float | None = float(score)
        except ValueError:
            value = None
        if not sep or not env.strip() or value is None or not math.isfinite(value):
            raise ValueError(f"--reference {item!r}: write ENV=SCORE, e.g. --reference CartPole-v1=500")
        out[env.strip()] = value
    return out


def multi_env_summary(table: GroupTable, references: dict[str, float] | None = None) -> MultiEnvSummary | None:
    """The summary of ``table``'s groups across envs; None when they are of one env."""
    references = references or {}
    envs = list(dict.fromkeys(r.env for r in table.rows if r.env != "several"))
    if len(envs) < 2:
        return None
    normalisation: dict[str, str] = {}
    left_out: list[str] = []
    scales: dict[str, tuple[float, float]] = {}  # env -> (baseline, divisor)
    for env in envs:
        base = next((r for r in table.rows if r.env == env and r.is_baseline), None)
        if base is None or base.stats.mean is None:
            left_out.append(f"{env} has no baseline group (name a baseline run of it)")
            continue
        b, ref = base.stats.mean, references.get(env)
        if ref is not None and ref != b:
            scales[env] = (b, ref - b)
            normalisation[env] = f"(score - baseline {b:,.2f}) / (reference {ref:,.2f} - baseline)"
        elif b != 0:
            scales[env] = (b, abs(b))
            normalisation[env] = f"(score - baseline {b:,.2f}) / |baseline| (no reference score given)"
        else:
            left_out.append(f"{env}'s baseline scores 0 and no reference was given (--reference {env}=SCORE)")
    scores: dict[str, dict[str, list[float]]] = {}
    for row in table.rows:
        if row.is_baseline or row.env not in scales:
            continue
        b, scale = scales[row.env]
        own = scores.setdefault(row.algo, {}).setdefault(row.env, [])
        own += [(v - b) / scale for v in row.values if v is not None]
    every = [v for per_env in scores.values() for vs in per_env.values() for v in vs]
    lo, hi = (min([0.0, *every]), max([1.0, *every])) if every else (0.0, 1.0)
    taus = [float(t) for t in np.linspace(lo, hi, TAUS)]
    rows = []
    for method, per_env in scores.items():
        samples = list(per_env.values())
        value, ci = stratified_iqm(samples)
        rows.append(MethodSummary(method, per_env, value, ci, performance_profile(samples, taus)))
    return MultiEnvSummary(normalisation, rows, taus, left_out)
