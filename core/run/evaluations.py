"""A run's stored evaluations (``evaluations.jsonl``): each ``rlpanel evaluate`` of a checkpoint, one record a line.

``core.agent.evaluate`` plays the episodes (it needs torch) and appends an ``Evaluation`` here; the
command line, the window and the results table read them back with ``read_evaluations`` (no torch).
A record a reader cannot use (a torn line, a field of the wrong type) is skipped, never an error.

The 95 % confidence interval of the mean reward is Student's t-interval over the episodes,
``mean ± t(0.975, n-1) · s / √n`` with ``s`` the sample standard deviation (n - 1) and the t quantile from
scipy (imported when an interval is computed: the tool does it, readers never). One episode has no interval
(None).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.run.layout import RunDir
from core.util.jsonl import JsonlWriter, read_jsonl


def ci95(rewards: list[float]) -> tuple[float, float] | None:
    """The t-interval of the mean of ``rewards`` (None for fewer than two)."""
    if len(rewards) < 2:
        return None
    from scipy import stats

    mean = statistics.fmean(rewards)
    half = float(stats.t.ppf(0.975, len(rewards) - 1)) * statistics.stdev(rewards) / math.sqrt(len(rewards))
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
    """The arguments of ``python -m core.agent.evaluate`` after the run folder (the CLI's and the window's)."""
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
    """The run's stored evaluations, oldest first (records that cannot be read are skipped; a file that cannot be
    opened, a folder under its name included, holds none: the run's other figures are still shown)."""
    try:
        records = read_jsonl(RunDir(run_dir).evaluations_file)
    except OSError:
        return []
    out = []
    for record in records:
        try:
            out.append(Evaluation.from_json(record))
        except (ValueError, TypeError):
            continue
    return out


def latest_evaluation(run_dir: Path) -> Evaluation | None:
    """The run's newest stored evaluation (the results table's), or None."""
    found = read_evaluations(run_dir)
    return found[-1] if found else None
