"""``rlpanel sweep check|run|status|stop|resume``: an Optuna search, each trial a normal run."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from core.cli.common import CliError, emit, runs_dir
from core.cli.ray_options import add_ray_args, cluster_from_args
from core.sweep.control import SweepError, resume_sweep, start_sweep, stop_sweep, sweep_status
from core.sweep.folder import SWEEP_ACTIVE, SweepFolder
from core.sweep.spec import SweepSpec, load_sweep


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("sweep", parents=[common], help="search hyperparameters with Optuna (detached runner)")
    inner = p.add_subparsers(dest="sweep_command", metavar="ACTION", required=True)
    c = inner.add_parser("check", parents=[common], help="validate a sweep file (schema paths, ranges, objective)")
    c.add_argument("file", type=Path)
    c.set_defaults(func=check)
    r = inner.add_parser("run", parents=[common], help="start a sweep file; follows it until it ends unless --detach")
    r.add_argument("file", type=Path)
    r.add_argument("--detach", action="store_true", help="return once the runner has started")
    add_ray_args(r, "send every trial's run to")
    r.set_defaults(func=run)
    s = inner.add_parser("status", parents=[common], help="the study: trials, states, values, the best")
    s.add_argument("name")
    s.set_defaults(func=status)
    t = inner.add_parser("stop", parents=[common], help="no more trials; running ones stop gracefully (resumable)")
    t.add_argument("name")
    t.set_defaults(func=stop)
    u = inner.add_parser("resume", parents=[common],
                         help="continue a stopped or crashed sweep where it was (on the Ray cluster it had, if any)")
    u.add_argument("name")
    u.add_argument("--detach", action="store_true", help="return once the runner has started")
    u.set_defaults(func=resume)


def _describe(spec: SweepSpec) -> str:
    seeds, envs = spec.seed_list(), [e.id for e in spec.envs]
    group = ""
    if seeds or len(envs) > 1:
        over = f"{len(seeds or [0])} seed(s)" + (f" x {len(envs)} envs ({', '.join(envs)}, normalised)" if len(envs) > 1 else "")
        group = f"; each trial {spec.group_size()} runs ({over}), judged by their {spec.aggregate}"
    lines = [f"sweep {spec.name}: {spec.n_trials} trials, {spec.parallel} at once, {spec.sampler} sampler, "
             f"pruner {spec.pruner}; objective {spec.objective.direction} {spec.objective.metric}{group}"]
    lines += [f"  {path}: {dist.describe()}" for path, dist in spec.space.items()]
    return "\n".join(lines)


def check(args: argparse.Namespace) -> int:
    spec = load_sweep(args.file)
    emit(args, {"ok": True, "name": spec.name, "space": list(spec.space), "n_trials": spec.n_trials},
         lambda: "ok: " + _describe(spec))
    return 0


def run(args: argparse.Namespace) -> int:
    spec = load_sweep(args.file)
    root = runs_dir(args)
    cluster = cluster_from_args(args)
    try:
        start_sweep(root, spec, cluster=cluster)
    except SweepError as exc:
        raise CliError(str(exc)) from None
    where = f"\ntrials run on the Ray cluster at {cluster['address']}" if cluster else ""
    return _after_start(args, root, spec.name, f"started {_describe(spec)}{where}")


def resume(args: argparse.Namespace) -> int:
    root = runs_dir(args)
    try:
        resume_sweep(root, args.name)
    except SweepError as exc:
        raise CliError(str(exc)) from None
    return _after_start(args, root, args.name, f"resumed sweep {args.name}")


def _after_start(args: argparse.Namespace, root: Path, name: str, note: str) -> int:
    storage = SweepFolder(root, name).local_storage()
    if args.detach or args.json:
        emit(args, {"name": name, "state": "running", "storage": storage, "message": note},
             f"{note}\nfollow it with: rlpanel sweep status {name}")
        return 0
    print(note, flush=True)
    return _follow(root, name)


def _follow(root: Path, name: str, poll_s: float = 2.0) -> int:
    """Print each trial's change of state until the sweep ends; Ctrl-C leaves the runner going."""
    seen: dict[int, str] = {}
    try:
        while True:
            report = sweep_status(root, name)
            for row in report["trials"]:
                if seen.get(row["number"]) != row["state"]:
                    seen[row["number"]] = row["state"]
                    print(_row_line(row), flush=True)
            if report["state"] not in SWEEP_ACTIVE:
                print(_summary(report), flush=True)
                return 0 if report["state"] in ("finished", "stopped") else 1
            time.sleep(poll_s)
    except KeyboardInterrupt:
        print(f"stopped following; the sweep goes on (rlpanel sweep status {name}, rlpanel sweep stop {name})")
        return 0


def figure_text(row: dict[str, Any]) -> str:
    """``412.3 ± 12.1 [385.6, 439.0] n=3``: a trial's value, standard error, 95 % interval and runs (what it has)."""
    if row.get("value") is None:
        return ""
    text = f"{row['value']:.4g}"
    if row.get("se") is not None:
        text += f" ± {row['se']:.3g}"
    if row.get("ci95"):
        text += f" [{row['ci95'][0]:.4g}, {row['ci95'][1]:.4g}]"
    return text + (f" n={row['n']}" if row.get("n") else "")


def _row_line(row: dict[str, Any]) -> str:
    params = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in row["params"].items())
    why = f"  ({row['reason']})" if row.get("reason") else ""
    runs = row.get("runs") or {}
    where = row["run_id"] or "-" if len(runs) < 2 else f"{len(runs)} runs"
    envs = "".join(f"\n        {env}: {_env_text(v)}" for env, v in (row.get("per_env") or {}).items())
    return f"  #{row['number']:<3} {row['state']:<8} {figure_text(row):>10}  {params}  {where}{why}{envs}"


def _env_text(v: dict[str, Any]) -> str:
    mean = "" if v.get("mean") is None else f"{v['mean']:.4g}"
    spread = f" ± {v['se']:.3g}" if v.get("se") is not None else ""
    norm = "" if v.get("normalised") is None else f", normalised {v['normalised']:.3g}"
    return f"{mean}{spread} over {v.get('n')} run(s){norm}"


def _summary(report: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for row in report["trials"]:
        counts[row["state"]] = counts.get(row["state"], 0) + 1
    best = report["best"]
    best_text = (f"best #{best['number']}: {figure_text(best)} with {best['params']} (run {best['run_id']})"
                 if best else "no trial finished yet")
    if best and best.get("runner_up"):
        best_text += f"\nrunner-up #{best['runner_up']['number']}: {figure_text(best['runner_up'])}; {best['separation']}"
    how = "".join(f"\n{env}: {text}" for env, text in (report.get("normalisation") or {}).items())
    return (f"sweep {report['name']}: {report['state']} ({', '.join(f'{n} {s}' for s, n in counts.items()) or 'no trials'} "
            f"of {report['n_trials']}); {best_text}{how}\nstorage: {report['storage']} (study {report['study_name']})")


def status(args: argparse.Namespace) -> int:
    try:
        report = sweep_status(runs_dir(args), args.name)
    except SweepError as exc:
        raise CliError(str(exc)) from None
    emit(args, report, lambda: "\n".join([_summary(report), *map(_row_line, report["trials"])]))
    return 0


def stop(args: argparse.Namespace) -> int:
    try:
        state = stop_sweep(runs_dir(args), args.name)
    except SweepError as exc:
        raise CliError(str(exc)) from None
    emit(args, {"name": args.name, "stop": True, "state": state["state"]},
         f"sweep {args.name}: no more trials; running trials stop gracefully (rlpanel sweep resume {args.name} continues it)")
    return 0
