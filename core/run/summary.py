"""A run's summary, computed from its records (no torch): what summary.json holds."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from core.run.layout import RunDir
from core.run.records import well_formed_only
from core.run.status import clean_status
from core.telemetry.summary import telemetry_summary
from core.util.files import read_json
from core.util.jsonl import read_jsonl

REWARD_WINDOW = 100  # episodes in the "mean reward" of SB3's logger, our tables and plots


def rolling_means(values: list[float], window: int = REWARD_WINDOW) -> list[float]:
    """Mean of the last ``window`` values at each position (fewer at the start)."""
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def std(values: list[float]) -> float | None:
    """The population standard deviation (what SB3's evaluate_policy reports); None without values."""
    if not values:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def summarize_records(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``final_mean_reward`` is the mean of the last ``final_window`` episodes (fewer than
    ``REWARD_WINDOW`` when the run played fewer), ``final_std_reward`` their spread."""
    rewards = [float(r["reward"]) for r in records if r.get("kind") == "episode"]
    steps = max((int(r.get("step", 0)) for r in records if r.get("kind") in ("episode", "progress", "train")), default=0)
    evals = [r for r in records if r.get("kind") == "eval"]
    episodes = [r for r in records if r.get("kind") == "episode"]
    means = rolling_means(rewards)
    # the best rolling mean counts only once a full window exists (or over all, if fewer episodes)
    full = means[REWARD_WINDOW - 1:] if len(means) >= REWARD_WINDOW else means[-1:]
    last = rewards[-REWARD_WINDOW:]
    return {
        "timesteps": steps,
        "episodes": len(rewards),
        "final_mean_reward": means[-1] if means else None,
        "final_window": len(last),
        "final_std_reward": std(last),
        "best_mean_reward": max(full) if full else None,
        "last_eval_mean_reward": evals[-1]["mean_reward"] if evals else None,
        "last_eval_std_reward": evals[-1]["std_reward"] if evals else None,
        "last_eval_episodes": evals[-1].get("episodes") if evals else None,
        # over every episode: a baseline's fixed policy is evaluated by all of them
        "all_mean_reward": sum(rewards) / len(rewards) if rewards else None,
        "all_std_reward": std(rewards),
        # the env's own measures (env.info_keys): the mean of the last REWARD_WINDOW episodes that have each, and of all
        "final_measures": env_measures(episodes[-REWARD_WINDOW:]),
        "all_measures": env_measures(episodes),
    }


def env_measures(episodes: list[dict[str, Any]]) -> dict[str, float]:
    """The mean of each env measure over ``episodes`` (those that reported it)."""
    sums: dict[str, list[float]] = {}
    for ep in episodes:
        measures = ep.get("m")
        if isinstance(measures, dict):
            for key, value in measures.items():
                if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                    sums.setdefault(str(key), []).append(float(value))
    return {key: sum(values) / len(values) for key, values in sums.items()}


def summarize(run_dir: Path) -> dict[str, Any]:
    """Records + status (wall time across attempts) + telemetry peaks."""
    layout = RunDir(run_dir)
    records = well_formed_only(read_jsonl(layout.metrics))
    out = summarize_records(records)
    status = clean_status(read_json(layout.status, default=None))
    wall = float(status.get("train_time_s") or 0.0)
    if not wall:  # the worker died before it recorded its time: from its start to its last record
        times = [float(r["t"]) for r in records if isinstance(r.get("t"), int | float)]
        start = status.get("started_at") or (times[0] if times else None)
        wall = max(times) - start if times and start else 0.0
    out["wall_time_s"] = round(wall, 3)
    out["steps_per_s"] = round(out["timesteps"] / wall, 2) if wall > 0 else None
    out["attempts"] = int(status.get("attempt", 1))
    out.update(telemetry_summary(layout.telemetry))
    return out
