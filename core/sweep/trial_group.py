"""A trial as a group of runs: its members (env x seed), each env's normalisation, and the group's statistics.

A sweep with ``seeds`` or ``envs`` judges each trial on ``len(envs) x seeds`` runs of the same parameters, so a lucky
seed does not pick the winner (rl_zoo3 #204). Over several envs each run's objective is normalised as the multi-env
table does it (``core.results.multienv``): ``(score - baseline) / (reference - baseline)`` with a reference, else
``(score - baseline) / |baseline|``. The scales are fixed when the sweep starts (kept in its state), so every trial
is judged on the same scale even if a newer baseline run appears later. The statistics are the results tables'
(``core.results.stats``): mean, standard error and t-interval, or the IQM with its (stratified) bootstrap interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.results.stats import Interval, aggregate, stratified_iqm
from core.sweep.spec import SweepSpec

SINGLE = "run"  # the member key of a trial of one run (no seeds, one env): today's trials


@dataclass(frozen=True)
class Member:
    """One run of a trial: its env (None: the base's) and seed (None: the base config's own)."""

    env: str | None
    seed: int | None

    @property
    def key(self) -> str:
        """``CartPole-v1#s0``, ``s0``, ``CartPole-v1``, or ``run`` for a trial of one run."""
        parts = [p for p in (self.env, None if self.seed is None else f"s{self.seed}") if p]
        return "#".join(parts) or SINGLE


def members(spec: SweepSpec) -> list[Member]:
    """Every run of one trial, env by env, each env's seeds in order."""
    envs = [e.id for e in spec.envs]
    seeds: list[int | None] = [None]
    seeds = [*(spec.seed_list() or [])] or seeds
    if len(envs) < 2:  # one env is the trial's env: it need not be in the key
        return [Member(None, s) for s in seeds]
    return [Member(env, s) for env in envs for s in seeds]


def trial_runs(attrs: dict[str, Any]) -> dict[str, str]:
    """A trial's runs by member key, from its user attrs (a trial from before seeds: its one ``run_id``)."""
    runs = attrs.get("runs")
    if isinstance(runs, dict):
        return {str(k): str(v) for k, v in runs.items()}
    return {SINGLE: str(attrs["run_id"])} if attrs.get("run_id") else {}


def member_env(spec: SweepSpec, member: Member) -> str | None:
    return member.env or (spec.envs[0].id if spec.envs else None)


@dataclass(frozen=True)
class EnvScale:
    """How one env's scores are normalised: ``(score - baseline) / divisor``, said in ``text``."""

    baseline: float
    divisor: float
    text: str

    def normalise(self, score: float) -> float:
        return (score - self.baseline) / self.divisor

    def to_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "divisor": self.divisor, "text": self.text}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EnvScale:
        return cls(float(data["baseline"]), float(data["divisor"]), str(data["text"]))


@dataclass(frozen=True)
class TrialStats:
    """A trial's figure over its runs: ``value`` (the told objective: mean or IQM, of normalised scores over several
    envs), its standard error (of a mean) and 95 % interval, and each env's raw figures."""

    n: int
    value: float | None
    se: float | None
    ci95: Interval | None
    per_env: dict[str, dict[str, Any]] = field(default_factory=dict)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "value": self.value, "se": self.se, "ci95": list(self.ci95) if self.ci95 else None,
                "per_env": self.per_env, "note": self.note}


def trial_stats(spec: SweepSpec, values: dict[str, float], scales: dict[str, EnvScale]) -> TrialStats:
    """The statistics of a trial's runs' objectives ``values`` (member key -> value)."""
    by_env: dict[str, list[float]] = {}
    for m in members(spec):
        if m.key in values and values[m.key] is not None:
            by_env.setdefault(member_env(spec, m) or "", []).append(float(values[m.key]))
    scaled = {env: [scales[env].normalise(v) for v in vs] if env in scales else vs for env, vs in by_env.items()}
    every = [v for vs in scaled.values() for v in vs]
    per_env = {}
    if scales:
        for env, vs in by_env.items():
            raw, norm = aggregate(vs), aggregate(scaled[env])
            per_env[env] = {"n": raw.n, "mean": raw.mean, "se": raw.se, "ci95": list(raw.ci95) if raw.ci95 else None,
                            "normalised": norm.mean, "normalisation": scales[env].text}
    stats = aggregate(every)
    if spec.aggregate == "iqm":
        value, ci = stratified_iqm(list(scaled.values())) if scales else (stats.iqm, stats.iqm_ci95)
        return TrialStats(stats.n, value, None, ci, per_env, "IQM with its bootstrap 95 % interval")
    return TrialStats(stats.n, stats.mean, stats.se, stats.ci95, per_env, stats.note)


def separation(best: dict[str, Any], runner_up: dict[str, Any] | None, seeds: int) -> str:
    """One line on whether the best trial's 95 % interval is clear of the runner-up's."""
    if runner_up is None:
        return ""
    a, b = best.get("ci95"), runner_up.get("ci95")
    runs = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if not a or not b:
        return f"the top 2 have no interval at {runs}: give the sweep seeds (seeds: 3) to tell them apart"
    if a[0] <= b[1] and b[0] <= a[1]:
        return f"the top 2 are not separated at {runs}: their 95 % intervals overlap"
    return f"the best is separated from the runner-up at {runs}: their 95 % intervals do not overlap"
