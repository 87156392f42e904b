"""``rlpanel sync RUN... --to mlflow|wandb``: runs copied into MLflow or W&B, only what is new each time.

The work is ``core.sync``; mlflow and wandb are imported only once a sync starts (their extras).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cli.common import CliError, emit, positive_float, run_path, runs_dir
from core.run.store import RunStore
from core.sync.settings import (
    TARGETS,
    Destination,
    destination,
    load_sync_settings,
    remembered,
    save_sync_settings,
    settings_path,
)
from core.sync.source import SyncError
from core.sync.sync import FOLLOW_EVERY_S, SyncResult, follow_runs, sync_run

HELP = ("copy runs into MLflow or Weights & Biases: config as params, every record as metrics at its step, tags, "
        "config, summary and checkpoints as artifacts; a second sync sends only what is new")
EPILOG = ("MLflow: default a SQLite store beside the runs folder (mlflow ui --backend-store-uri sqlite:///... opens "
          "it), experiment rlpanel. W&B: offline by default, written under <runs>/.wandb (wandb sync DIR uploads it "
          "later); --online sends it now and needs your login first (wandb login). Each needs its extra: "
          "pip install \"rlpanel[mlflow]\" or \"rlpanel[wandb]\". Defaults come from sync.yaml in the user folder "
          "(--remember writes it), which is also where runtime.sync sends a run by itself.")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("sync", parents=[common], help=HELP, description=HELP, epilog=EPILOG)
    p.add_argument("run_ids", nargs="+", metavar="RUN", help="the runs' ids (or unique starts of them)")
    p.add_argument("--to", required=True, choices=TARGETS, help="the tracker: mlflow or wandb")
    p.add_argument("--uri", metavar="URI", help="MLflow's tracking URI (default: sqlite:///<runs folder>/../mlflow.db)")
    p.add_argument("--experiment", metavar="NAME", help="MLflow's experiment (default rlpanel)")
    p.add_argument("--project", metavar="NAME", help="W&B's project (default rlpanel)")
    p.add_argument("--dir", metavar="DIR", help="W&B: the folder its runs are written in (default <runs>/.wandb)")
    online = p.add_mutually_exclusive_group()
    online.add_argument("--online", dest="online", action="store_true", default=None,
                        help="W&B: send now (needs wandb login); default offline")
    online.add_argument("--offline", dest="online", action="store_false", help="W&B: write offline (the default)")
    p.add_argument("--follow", action="store_true", help="keep syncing live runs until they end")
    p.add_argument("--every", type=positive_float, default=FOLLOW_EVERY_S, metavar="S",
                   help=f"with --follow: seconds between syncs (default {FOLLOW_EVERY_S:g})")
    p.add_argument("--remember", action="store_true",
                   help="after a sync that went through, keep this URI/experiment or project as the default "
                        "(sync.yaml: also runtime.sync's)")
    p.set_defaults(func=run)


def _destination(args: argparse.Namespace, runs: Path) -> Destination:
    wrong = ([("--uri", args.uri), ("--experiment", args.experiment)] if args.to == "wandb" else
             [("--project", args.project), ("--dir", args.dir), ("--online", args.online)])
    given = [name for name, value in wrong if value is not None]
    if given:
        other = "W&B takes --project, --dir and --online" if args.to == "wandb" else "MLflow takes --uri and --experiment"
        raise CliError(f"{', '.join(given)} is not for --to {args.to}: {other}", 2)
    try:
        settings = load_sync_settings()
        if args.to == "mlflow":
            return destination("mlflow", runs, settings, uri=args.uri, name=args.experiment)
        return destination("wandb", runs, settings, uri=args.dir, name=args.project, online=args.online)
    except SyncError as exc:
        raise CliError(str(exc), 2) from None


def run(args: argparse.Namespace) -> int:
    runs = runs_dir(args)
    store = RunStore(runs)
    run_dirs = list(dict.fromkeys(run_path(store, run_id) for run_id in args.run_ids))
    dest = _destination(args, runs)
    results: list[SyncResult] = []
    errors: list[str] = []

    def failed(exc: SyncError) -> None:
        errors.append(str(exc))
        print(f"rlpanel sync: {exc}", file=sys.stderr, flush=True)

    def passed(result: SyncResult) -> None:
        if not args.json and result.passes > 1 and result.records:
            print(result.line(), flush=True)

    if args.follow:
        try:
            results = follow_runs(run_dirs, dest, args.every, on_pass=passed)
        except SyncError as exc:
            raise CliError(str(exc)) from None  # nothing remembered either
    else:
        for run_dir in run_dirs:
            try:
                results.append(sync_run(run_dir, dest))
            except SyncError as exc:
                failed(exc)
    if args.remember and not errors:  # a destination that refused the runs is not kept as the default
        save_sync_settings(remembered(load_sync_settings(), dest, runs))
    data = {"target": dest.target, "destination": dest.key, "runs": [r.to_json() for r in results], "errors": errors,
            "remembered": str(settings_path()) if args.remember and not errors else None}
    emit(args, data, lambda: "\n".join(r.line() for r in results))
    return 1 if errors else 0  # each failure was said on its own line
