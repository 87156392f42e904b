"""Reward curves for the Results overlay: each run's rolling mean against steps and seconds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.run.episodes import REWARD_WINDOW, episode_groups, window_means
from core.run.layout import RunDir
from core.run.records import well_formed_only
from core.run.status import read_recorded_status
from core.run.store import run_info
from core.util.jsonl import read_jsonl


@dataclass
class RewardCurve:
    """A run's rolling mean of episode rewards against timesteps and seconds since its start."""

    run_id: str
    label: str
    name: str | None
    steps: list[float]
    seconds: list[float]
    mean_reward: list[float]
    seed: int | None = None  # its seed in a group of seeds (status ``group``); None: a run launched alone


def legend_labels(curves: list[RewardCurve]) -> list[str]:
    """Each curve by its run name; the runs of a group of seeds (which share their name) by name and seed; by name
    and id where names still repeat or are missing."""
    names = [c.name for c in curves]
    seeded = [f"{c.name}, seed {c.seed}" if c.name and c.seed is not None else None for c in curves]
    return [c.name if c.name and names.count(c.name) == 1 else s if s and seeded.count(s) == 1 else c.label
            for c, s in zip(curves, seeded, strict=True)]


def reward_curve(run_dir: Path, window: int = REWARD_WINDOW) -> RewardCurve:
    run_dir = Path(run_dir)
    layout = RunDir(run_dir)
    records = well_formed_only(read_jsonl(layout.metrics))
    groups = episode_groups(records)  # an aggregate is one point, at the end of its episodes
    started_at = read_recorded_status(run_dir).started_at
    first_t = next((float(r["t"]) for r in records if isinstance(r.get("t"), int | float)), None)
    starts = [t for t in (started_at, first_t) if t is not None]
    t0 = min(starts) if starts else 0.0
    info = run_info(run_dir)
    cfg_name, group = info.name, info.status.group or {}
    return RewardCurve(
        run_id=run_dir.name, label=f"{cfg_name} ({run_dir.name})" if cfg_name else run_dir.name, name=cfg_name,
        steps=[float(g.step) for g in groups],
        seconds=[g.t - t0 for g in groups],
        mean_reward=[mean for mean, _ in window_means(groups, window)],
        seed=group.get("seed") if group.get("id") and isinstance(group.get("seed"), int) else None)
