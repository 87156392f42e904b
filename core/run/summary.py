"""A run's summary, computed from its records (no torch): what summary.json holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.run.checkpoints import best_checkpoint
from core.run.episodes import (
    REWARD_WINDOW,
    episode_count,
    episode_groups,
    last_window,
    measure_means,
    weighted_mean,
    weighted_std,
    window_means,
)
from core.run.layout import RunDir
from core.run.records import EVAL, STEP_KINDS, well_formed_only
from core.run.status import read_recorded_status
from core.run.time_split import split_of
from core.telemetry.summary import telemetry_summary
from core.util.jsonl import read_jsonl


def summarize_records(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``final_mean_reward`` is the mean of the last ``final_window`` episodes (fewer than
    ``REWARD_WINDOW`` when the run played fewer), ``final_std_reward`` their spread. Aggregate
    records count as their episodes (``core.run.episodes``)."""
    groups = episode_groups(records)
    steps = max((int(r.get("step", 0)) for r in records if r.get("kind") in STEP_KINDS), default=0)
    evals = [r for r in records if r.get("kind") == EVAL]
    episodes = episode_count(groups)
    means = window_means(groups)
    # the best rolling mean counts only once a full window exists (or over all, if fewer episodes)
    full = [m for m, n in means if n >= REWARD_WINDOW] or [m for m, _ in means[-1:]]
    last = last_window(groups)
    every = [(g, float(g.count)) for g in groups]
    return {
        "timesteps": steps,
        "episodes": episodes,
        "final_mean_reward": weighted_mean(last),
        "final_window": min(episodes, REWARD_WINDOW),
        "final_std_reward": weighted_std(last),
        "best_mean_reward": max(full) if full else None,
        "last_eval_mean_reward": evals[-1]["mean_reward"] if evals else None,
        "last_eval_std_reward": evals[-1]["std_reward"] if evals else None,
        "last_eval_episodes": evals[-1].get("episodes") if evals else None,
        # over every episode: a baseline's fixed policy is evaluated by all of them
        "all_mean_reward": weighted_mean(every),
        "all_std_reward": weighted_std(every),
        # the env's own measures (env.info_keys): the mean of the last REWARD_WINDOW episodes that have each, and of all
        "final_measures": measure_means(last),
        "all_measures": measure_means(every),
        # where the update cycles' time went, over the attempts (core.run.time_split); None: no cycle records
        "time_split": split.to_json() if (split := split_of(records)) is not None else None,
    }


def summarize(run_dir: Path) -> dict[str, Any]:
    """Records + status (wall time across attempts) + telemetry peaks."""
    layout = RunDir(run_dir)
    records = well_formed_only(read_jsonl(layout.metrics))
    out = summarize_records(records)
    status = read_recorded_status(run_dir)
    wall = status.train_time_s or 0.0
    if not wall:  # the worker died before it recorded its time: from its start to its last record
        times = [float(r["t"]) for r in records if isinstance(r.get("t"), int | float)]
        start = status.started_at or (times[0] if times else None)
        wall = max(times) - start if times and start else 0.0
    out["wall_time_s"] = round(wall, 3)
    out["steps_per_s"] = round(out["timesteps"] / wall, 2) if wall > 0 else None
    out["train_cpu_s"] = round(status.train_cpu_s, 3) if status.train_cpu_s is not None else None
    out["attempts"] = status.attempt or 1
    best = best_checkpoint(run_dir)  # the checkpoint of the best periodic evaluation (checkpoints/best.json)
    out["best_eval"] = {"step": best.step, "mean_reward": best.mean_reward} if best is not None else None
    out.update(telemetry_summary(layout.telemetry))
    out.update(_estimate_beside_peak(status.estimate_gpu, out.get("peak_process_gpu_memory_bytes")))
    return out


def _estimate_beside_peak(estimate: Any, peak: Any) -> dict[str, Any]:
    """The worker's estimate for its card (``core.worker.fit_record``) beside the measured process peak (of any
    measure: ``core.run.card_history`` learns only from the whole-process ones)."""
    if not isinstance(estimate, dict) or not isinstance(estimate.get("bytes"), int) or estimate["bytes"] <= 0:
        return {}
    ratio = round(peak / estimate["bytes"], 4) if isinstance(peak, int | float) and peak > 0 else None
    return {"estimate_gpu_bytes": estimate["bytes"], "estimate_gpu_source": estimate.get("source"),
            "gpu_uuid": estimate.get("uuid"), "peak_to_estimate": ratio,
            "estimate_engine": estimate.get("engine") or "sb3"}  # a run from before the engine field: SB3's
