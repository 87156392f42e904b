"""The Optuna side of a sweep: the study (storage, sampler, pruner), its distributions, what a run
reports to it, and the trials as rows for the CLI and the window."""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import FrozenTrial, TrialState

from core.run.episodes import REWARD_WINDOW, episode_groups
from core.run.layout import RunDir
from core.run.records import well_formed_only
from core.sweep.folder import SweepFolder
from core.sweep.spec import Distribution, SweepSpec
from core.sweep.trial_group import EnvScale, TrialStats, separation, trial_runs, trial_stats
from core.util.jsonl import read_jsonl
from core.util.locks import held_briefly

optuna.logging.set_verbosity(optuna.logging.WARNING)


def storage_url(spec: SweepSpec, folder: SweepFolder) -> str:
    """The spec's RDB URL, else the SQLite file in the sweep's folder."""
    return spec.storage or folder.local_storage()


def to_optuna(dist: Distribution) -> BaseDistribution:
    if dist.kind == "choice":
        return CategoricalDistribution(dist.encoded_choices())
    if dist.kind == "int":
        return IntDistribution(int(dist.low), int(dist.high))
    return FloatDistribution(dist.low, dist.high, log=dist.kind == "log_uniform")


def distributions(spec: SweepSpec) -> dict[str, BaseDistribution]:
    return {path: to_optuna(dist) for path, dist in spec.space.items()}


def open_study(spec: SweepSpec, folder: SweepFolder) -> optuna.Study:
    """Create the study or load it (a resume); the sampler is seeded from the spec (plus the trials
    already asked, on a resume)."""
    folder.path.mkdir(parents=True, exist_ok=True)
    with _storage_lock(spec, folder):
        existing = _load(spec, folder)
        told = len(existing.get_trials(deepcopy=False)) if existing else 0
        # a resumed study must not replay the seed's sequence from its start (the same params again)
        seed = None if spec.seed is None else spec.seed + told
        sampler: optuna.samplers.BaseSampler
        if spec.sampler == "random":
            sampler = optuna.samplers.RandomSampler(seed=seed)
        else:
            sampler = optuna.samplers.TPESampler(seed=seed)
        pruner: optuna.pruners.BasePruner
        if spec.pruner == "median":
            pruner = optuna.pruners.MedianPruner(n_startup_trials=spec.pruner_options.n_startup_trials,
                                                 n_warmup_steps=spec.pruner_options.n_warmup_steps)
        else:
            pruner = optuna.pruners.NopPruner()
        return optuna.create_study(study_name=spec.study_name(), storage=storage_url(spec, folder), sampler=sampler,
                                   pruner=pruner, direction=spec.objective.direction, load_if_exists=True)


def load_study(spec: SweepSpec, folder: SweepFolder) -> optuna.Study | None:
    """The study for reading (None before its runner created it)."""
    if spec.storage is None and not folder.database.is_file():
        return None
    with _storage_lock(spec, folder):
        return _load(spec, folder)


def _load(spec: SweepSpec, folder: SweepFolder) -> optuna.Study | None:
    if spec.storage is None and not folder.database.is_file():
        return None
    try:
        return optuna.load_study(study_name=spec.study_name(), storage=storage_url(spec, folder))
    except KeyError:
        return None


def _storage_lock(spec: SweepSpec, folder: SweepFolder) -> AbstractContextManager[None]:
    """Opening an Optuna storage creates its tables when the file is new: a runner creating the study
    and a ``sweep status`` (or the window) reading it at that moment both did, and the runner died
    on SQLite's UNIQUE constraint. Whoever opens the storage holds this lock while doing so."""
    return held_briefly(folder.path / "study.lock", timeout_s=60.0, what=f"sweep {spec.name}'s study")


# --- what a run reports ----------------------------------------------------------------------

def eval_points(run_dir: Path) -> list[tuple[int, float]]:
    """The run's evaluations as (step, mean reward), finite values only."""
    out = []
    for rec in read_jsonl(RunDir(run_dir).metrics):
        if rec.get("kind") == "eval" and isinstance(rec.get("step"), int) and isinstance(rec.get("mean_reward"), int | float):
            value = float(rec["mean_reward"])
            if math.isfinite(value):
                out.append((int(rec["step"]), value))
    return out


def _episode_values(run_dir: Path, metric: str) -> list[tuple[int, float, int]]:
    """(step, value, episodes) of each episode record: its reward, or its info value ``info.KEY``;
    an aggregate record (``core.run.episodes``) gives its mean and counts as its episodes."""
    key = metric.removeprefix("info.")
    out = []
    for g in episode_groups(well_formed_only(read_jsonl(RunDir(run_dir).metrics))):
        value = g.reward if metric == "episode_mean_reward" else g.measures.get(key)
        if value is not None and math.isfinite(value):
            out.append((g.step, value, g.count))
    return out


def _window_mean(values: list[tuple[float, int]]) -> float | None:
    """The mean of the last ``REWARD_WINDOW`` episodes of (value, episodes) pairs, the oldest pair in part."""
    need, total, acc = float(REWARD_WINDOW), 0.0, 0.0
    for value, count in reversed(values):
        if need <= 0:
            break
        w = min(float(count), need)
        acc, total, need = acc + value * w, total + w, need - w
    return acc / total if total else None


def metric_points(run_dir: Path, metric: str) -> list[tuple[int, float]]:
    """The objective as the run went, reported to the pruner: each evaluation's mean reward, or at
    each evaluation's step the mean over the last episodes (reward or info value) up to it."""
    evals = eval_points(run_dir)
    if metric == "eval_mean_reward":
        return evals
    episodes = _episode_values(run_dir, metric)
    out = []
    for step, _ in evals:
        mean = _window_mean([(v, n) for s, v, n in episodes if s <= step])
        if mean is not None:
            out.append((step, mean))
    return out


def objective_value(run_dir: Path, metric: str) -> float | None:
    """The objective of an ended run: its last evaluation, or the mean of its last episodes' reward or info value."""
    if metric == "eval_mean_reward":
        points = eval_points(run_dir)
        return points[-1][1] if points else None
    return _window_mean([(v, n) for _, v, n in _episode_values(run_dir, metric)])


# --- rows -------------------------------------------------------------------------------------

def trial_row(spec: SweepSpec, trial: FrozenTrial, scales: dict[str, EnvScale] | None = None) -> dict[str, Any]:
    """One trial as ``sweep status --json`` prints it: params as the config takes them, and its group's statistics
    (``n`` runs, ``value``, ``se``, ``ci95``, ``per_env`` over several envs; ``core.sweep.trial_group``)."""
    values = trial.user_attrs.get("values")
    if isinstance(values, dict) and values:
        stats = trial_stats(spec, values, scales or {})
    elif trial.value is not None:  # a trial told before seeds: one run
        stats = TrialStats(1, trial.value, None, None, note="one run: no spread, no interval")
    else:
        stats = TrialStats(0, None, None, None)
    last = max(trial.intermediate_values) if trial.intermediate_values else None
    return {"number": trial.number, "state": trial.state.name.lower(), "value": trial.value,
            "params": spec.decode(trial.params), "run_id": trial.user_attrs.get("run_id"),
            "runs": trial_runs(trial.user_attrs), "reason": trial.user_attrs.get("fail_reason"),
            **{k: v for k, v in stats.to_json().items() if k != "value"},
            "steps": last, "last_value": trial.intermediate_values[last] if last is not None else None,
            "waiting": trial.user_attrs.get("waiting") if trial.state == TrialState.RUNNING else None}


def best_row(spec: SweepSpec, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The best completed trial with its interval, the runner-up's, and whether the two are told apart."""
    complete = sorted((r for r in rows if r["state"] == "complete" and r["value"] is not None),
                      key=lambda r: r["value"], reverse=spec.objective.direction == "maximize")
    if not complete:
        return None
    best, runner_up = complete[0], (complete[1] if len(complete) > 1 else None)
    seeds = len(spec.seed_list() or [0])
    return {"number": best["number"], "value": best["value"], "n": best["n"], "se": best["se"], "ci95": best["ci95"],
            "params": best["params"], "run_id": best["run_id"],
            "runner_up": {k: runner_up[k] for k in ("number", "value", "n", "se", "ci95")} if runner_up else None,
            "separation": separation(best, runner_up, seeds)}


def param_importances(study: optuna.Study) -> dict[str, float]:
    """Optuna's parameter importances over the completed trials; empty until two have completed
    (or when every completed trial has the same value)."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if len(complete) < 2:
        return {}
    try:
        return {k: float(v) for k, v in optuna.importance.get_param_importances(study).items()}
    except (RuntimeError, ValueError, ZeroDivisionError):
        return {}
