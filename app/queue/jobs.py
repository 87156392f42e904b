"""Plan jobs from what the Configure panel holds: a preset, the user's overrides, the config.

Plain Python (no Qt). A job keeps the plan file readable: ``algo``, ``env`` and ``timesteps`` as
their own keys, every other override as one dotted ``set`` path, nothing the preset already says.
"""

from __future__ import annotations

import re
from typing import Any

from app.configure.state import schema_leaves
from core.config.schema import RunConfig
from core.queue.plan import PlanJob

# Paths a job states with its own keys (or that the job sets itself: its name).
OWN_KEYS = ("name", "schema_version", "description", "base", "algo", "env", "budget.total_timesteps", "budget.episodes")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$")


def env_text(config: RunConfig) -> str:
    """The env as a plan job writes it: a gymnasium id or ``module:Class``."""
    return config.env.id or config.env.entry_point or ""


def default_job_name(algo: str, config_env: str, taken: list[str] | tuple[str, ...] = ()) -> str:
    """``ppo-CartPole-v1``; ``-2``, ``-3`` ... when the plan has it already; always a valid job name."""
    env = config_env.rsplit(":", 1)[-1]
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{algo.lower()}-{env}").strip("-._")[:44] or "job"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def job_from_config(name: str, preset: str | None, overrides: dict[str, Any], config: RunConfig) -> PlanJob:
    """A job that gives ``config`` again: ``preset`` + ``overrides`` as ``set`` paths + algo/env/timesteps."""
    flat = schema_leaves(overrides, whole=())
    keep_env = bool(config.env.kwargs)  # ``env:`` replaces the whole env section: keep kwargs as set paths
    set_paths = {p: v for p, v in flat.items()
                 if not (p in OWN_KEYS or p.startswith("env.") and not keep_env)}
    if keep_env:
        set_paths = {**{f"env.{k}": v for k, v in config.env.model_dump(mode="json").items()}, **set_paths}
        set_paths.pop("env", None)
    return PlanJob(name=name, preset=preset, algo=config.algo, env=None if keep_env else env_text(config),
                   timesteps=None if config.is_baseline else config.budget.total_timesteps,
                   episodes=config.budget.episodes if config.is_baseline else None,
                   set=set_paths)


def baseline_job(name: str, env: str, episodes: int = 20) -> PlanJob:
    return PlanJob(name=name, algo="random", env=env, episodes=episodes)


def job_budget(job: PlanJob) -> str:
    if job.episodes:
        return f"{job.episodes:,} episodes"
    if job.timesteps:
        return f"{job.timesteps:,} steps"
    return "preset"


def job_seeds(job: PlanJob) -> str:
    """The plan table's Seeds cell: ``5 (0-4)``, ``3, 7, 11``, or empty for a single run."""
    seeds = job.seed_list()
    if seeds is None:
        return ""
    return f"{len(seeds)} ({seeds[0]}-{seeds[-1]})" if isinstance(job.seeds, int) else ", ".join(str(s) for s in seeds)


def job_changes(job: PlanJob) -> str:
    """The job's ``set`` paths as one line, for the plan table."""
    return ", ".join(f"{p}={v}" for p, v in job.set.items())
