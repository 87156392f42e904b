"""Each env's scale in a sweep over several envs: the baseline (a score in the file, else the runs folder's baseline
run of the env, chosen as the results tables choose it) and the reference, resolved once when the sweep starts."""

from __future__ import annotations

import math
from pathlib import Path

from core.results.baselines import env_baselines
from core.results.table import result_row
from core.run.store import RunStore
from core.sweep.spec import SweepSpec
from core.sweep.study import objective_value
from core.sweep.trial_group import EnvScale


class ScaleError(ValueError):
    """An env of a multi-env sweep with nothing to normalise its scores by, with the fix."""


def baseline_figure(run_dir: Path, metric: str) -> float | None:
    """A baseline run's score for ``metric``: the mean of all its episodes (as the results tables take it), or its
    info value's mean over its last episodes."""
    if metric.startswith("info."):
        return objective_value(run_dir, metric)
    return result_row(run_dir).eval_mean_reward


def resolve_scales(spec: SweepSpec, runs_dir: Path) -> dict[str, EnvScale]:
    """Each env's scale for a sweep over several envs (empty for one env); ``ScaleError`` names an env that has
    neither a ``baseline`` score in the file nor a finished baseline run in ``runs_dir``."""
    if len(spec.envs) < 2:
        return {}
    needs_run = [e.id for e in spec.envs if e.baseline is None]
    runs = env_baselines(RunStore(runs_dir).list(), needs_run) if needs_run else {}
    out: dict[str, EnvScale] = {}
    for n, env in enumerate(spec.envs):
        run = runs.get(env.id)
        base = env.baseline if env.baseline is not None else (baseline_figure(run, spec.objective.metric) if run else None)
        if base is None or not math.isfinite(base):
            raise ScaleError(f"envs[{n}] {env.id}: nothing to normalise its scores by: give its baseline score "
                             f"({{id: {env.id}, baseline: SCORE}}), or train a baseline run first "
                             f"(rlpanel train --algo random --env {env.id})")
        where = f"baseline {base:,.2f}" + (f" (run {run.name})" if run and env.baseline is None else "")
        if env.reference is not None and env.reference != base:
            out[env.id] = EnvScale(base, env.reference - base, f"(score - {where}) / (reference {env.reference:,.2f} - baseline)")
        elif base != 0:
            out[env.id] = EnvScale(base, abs(base), f"(score - {where}) / |baseline| (no reference score given)")
        else:
            raise ScaleError(f"envs[{n}] {env.id}: its baseline scores 0 and no reference was given: "
                             f"add one ({{id: {env.id}, reference: SCORE}})")
    return out
