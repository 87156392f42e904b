"""A run's stored evaluations (``evaluations.jsonl``): each ``rlpanel evaluate`` of a checkpoint, one record a line.

``core.policy.evaluate`` plays the episodes (it needs torch) and appends an ``Evaluation`` here; the
command line, the window and the results table read them back with ``read_evaluations`` (no torch).
A record a reader cannot use (a torn line, a field of the wrong type) is skipped, never an error.

The 95 % confidence interval of the mean reward is Student's t-interval over the episodes,
``mean ± t(0.975, n-1) · s / √n`` with ``s`` the sample standard deviation (n - 1): the t quantile
comes from a table (``T_975``; between its rows, interpolated in 1/df, within 0.001 of scipy's
``stats.t.ppf``), so neither the CLI nor the window needs scipy. One episode has no interval (None).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.run.layout import RunDir
from core.util.jsonl import JsonlWriter, read_jsonl

# Student's t, two-sided 95 % (the 0.975 quantile), by degrees of freedom; above 120: the normal 1.96
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
         20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
         29: 2.045, 30: 2.042, 40: 2.021, 50: 2.009, 60: 2.000, 80: 1.990, 100: 1.984, 120: 1.980}
Z_975 = 1.959964


def t_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` (>= 1) degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if df in T_975:
        return T_975[df]
    rows = sorted(T_975)
    above = next((d for d in rows if d > df), None)
    below, high = max(d for d in rows if d < df), above
    if high is None:  # past the table: interpolate in 1/df towards the normal quantile (df = infinity)
        return Z_975 + (T_975[below] - Z_975) * below / df
    weight = (1 / below - 1 / df) / (1 / below - 1 / high)
    return T_975[below] + weight * (T_975[high] - T_975[below])


def ci95(rewards: list[float]) -> tuple[float, float] | None:
    """The t-interval of the mean of ``rewards`` (None for fewer than two)."""
    if len(rewards) < 2:
        return None
    mean = statistics.fmean(rewards)
    half = t_975(len(rewards) - 1) * statistics.stdev(rewards) / math.sqrt(len(rewards))
    return (mean - half, mean + half)


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of a checkpoint: which (``checkpoint`` as asked: last, best or a step; the step it was),
    how (episodes, deterministic actions, the env's seed), and what came of it (rewards as the env gave them)."""

    run: str
    checkpoint: str
    checkpoint_step: int
    episodes: int
    deterministic: bool
    seed: int | None
    mean_reward: float
    std_reward: float  # numpy's std over the episodes (population, as SB3's evaluate_policy)
    ci95: tuple[float, float] | None
    mean_length: float
    measures: dict[str, float] = field(default_factory=dict)  # env.info_keys: mean over the episodes reporting each
    rewards: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    t: float = 0.0  # when it ended (seconds since the epoch)
    wall_s: float | None = None  # how long it took

    @property
    def label(self) -> str:
        """``step 1,024`` or ``best (step 1,024)``: which checkpoint, for a line or a column."""
        step = f"step {self.checkpoint_step:,}"
        return f"best ({step})" if self.checkpoint == "best" else step

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci95"] = list(self.ci95) if self.ci95 is not None else None
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evaluation:
        """The record ``data``; ``ValueError`` naming the field that is missing or of the wrong type."""
        def number(key: str) -> float:
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"evaluation record: {key} is {value!r}, not a number")
            return float(value)

        ci = data.get("ci95")
        if ci is not None and not (isinstance(ci, list | tuple) and len(ci) == 2
                                   and all(isinstance(v, int | float) and not isinstance(v, bool) for v in ci)):
            raise ValueError(f"evaluation record: ci95 is {ci!r}, not [low, high]")
        seed = data.get("seed")
        measures = data.get("measures") or {}
        if not isinstance(measures, dict):
            raise ValueError(f"evaluation record: measures is {measures!r}, not a mapping")
        return cls(run=str(data.get("run", "")), checkpoint=str(data.get("checkpoint", "")),
                   checkpoint_step=int(number("checkpoint_step")), episodes=int(number("episodes")),
                   deterministic=bool(data.get("deterministic", True)),
                   seed=int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None,
                   mean_reward=number("mean_reward"), std_reward=number("std_reward"),
                   ci95=(float(ci[0]), float(ci[1])) if ci is not None else None, mean_length=number("mean_length"),
                   measures={str(k): float(v) for k, v in measures.items() if isinstance(v, int | float)},
                   rewards=[float(r) for r in data.get("rewards") or [] if isinstance(r, int | float)],
                   lengths=[int(n) for n in data.get("lengths") or [] if isinstance(n, int | float)],
                   t=number("t") if "t" in data else 0.0,
                   wall_s=float(data["wall_s"]) if isinstance(data.get("wall_s"), int | float) else None)

    def text(self) -> str:
        """A few lines for a reader: the mean with its spread and interval, the episodes, the checkpoint, measures."""
        how = "deterministic" if self.deterministic else "stochastic"
        lines = [f"mean reward {self.mean_reward:,.2f} ± {self.std_reward:,.2f} (std)",
                 f"95% CI [{self.ci95[0]:,.2f}, {self.ci95[1]:,.2f}]" if self.ci95 else "95% CI: needs two episodes or more",
                 f"{self.episodes} episodes, {how} actions, seed {self.seed}, mean length {self.mean_length:,.1f}",
                 f"checkpoint: {self.label}"]
        lines += [f"{key}: {value:,.4g}" for key, value in self.measures.items()]
        return "\n".join(lines)


def tool_args(checkpoint: str, episodes: int, deterministic: bool, seed: int | None, device: str = "cpu") -> list[str]:
    """The arguments of ``python -m core.policy.evaluate`` after the run folder (the CLI's and the window's)."""
    args = ["--checkpoint", str(checkpoint), "--episodes", str(episodes),
            "--deterministic" if deterministic else "--stochastic", "--device", device]
    return args + (["--seed", str(seed)] if seed is not None else [])


def append_evaluation(run_dir: Path, evaluation: Evaluation) -> None:
    """Add ``evaluation`` to the run's ``evaluations.jsonl`` (the worker never writes this file)."""
    writer = JsonlWriter(RunDir(run_dir).evaluations_file)
    try:
        writer.write([evaluation.to_json()])
    finally:
        writer.close()


def read_evaluations(run_dir: Path) -> list[Evaluation]:
    """The run's stored evaluations, oldest first (records that cannot be read are skipped)."""
    out = []
    for record in read_jsonl(RunDir(run_dir).evaluations_file):
        try:
            out.append(Evaluation.from_json(record))
        except (ValueError, TypeError):
            continue
    return out


def latest_evaluation(run_dir: Path) -> Evaluation | None:
    """The run's newest stored evaluation (the results table's), or None."""
    found = read_evaluations(run_dir)
    return found[-1] if found else None
