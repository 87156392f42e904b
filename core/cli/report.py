"""``rlpanel report``: the morning report of the runs and queue jobs since a time (md, html or xlsx)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.cli.common import CliError, runs_dir
from core.cli.export import grid_intensity
from core.queue.state import read_queue
from core.results.report import REPORT_FORMATS, morning_report, render, since_time
from core.run.store import RunStore
from core.sweep.control import sweeps_since
from core.util.files import write_bytes_atomic

SUFFIXES = {".md": "md", ".html": "html", ".htm": "html", ".xlsx": "xlsx"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("report", parents=[common], help="the morning report: every run and queue job since a time",
                       description="Every run started since --since (and the night's sweeps and queue jobs): state and "
                                   "why, resumed or restarted, wall time, best and final reward, the reward and the "
                                   "env's measures against a baseline, energy, peak temperature, time paused or "
                                   "throttled; failed runs with the end of their log.")
    p.add_argument("--since", default="18:00", metavar="HH:MM",
                   help="the last such time before now (default 18:00), or YYYY-MM-DD HH:MM")
    p.add_argument("--baseline", metavar="RUN", action="append",
                   help="compare the runs of this run's env with it; repeat for other envs (default per env: the "
                        "newest finished random or constant run of that env)")
    p.add_argument("--grid-g-per-kwh", type=float, metavar="G", help="the grid's CO2 intensity: adds a CO2 estimate")
    p.add_argument("--include-unfinished", action="store_true",
                   help="in the seed groups: count the runs of a group that did not finish (crashed, stopped, "
                        "failed, running) in its statistics; by default they are left out and listed")
    p.add_argument("--format", choices=REPORT_FORMATS, help="md (default), html or xlsx (needs -o)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE; md and html go to stdout without it")
    p.add_argument("--overwrite", action="store_true", help="replace an existing FILE")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = runs_dir(args)
    store = RunStore(root)
    output = Path(args.output).expanduser() if args.output else None
    fmt = args.format or (SUFFIXES.get(output.suffix.lower(), "md") if output is not None else "md")
    if fmt == "xlsx" and output is None:
        raise CliError("xlsx is a binary file and is not printed: give a file with -o, e.g. -o morning.xlsx", 2)
    if output is not None and output.exists() and not args.overwrite:
        raise CliError(f"{output} exists; pass --overwrite to replace it or choose another -o FILE", 2)
    try:
        since = since_time(args.since)
    except ValueError as exc:
        raise CliError(f"--since {exc}", 2) from None
    try:
        baselines = [store.path(run) for run in args.baseline or []]
    except KeyError as exc:
        raise CliError(f"--baseline {exc.args[0]}; list the runs with: rlpanel runs") from None
    try:
        queue = read_queue(root)
        report = morning_report(store, since, baselines, grid_intensity(args.grid_g_per_kwh),
                                queue.to_json() if queue is not None else None, sweeps_since(root, since),
                                include_unfinished=args.include_unfinished)
    except ValueError as exc:
        raise CliError(f"--baseline: {exc}", 2) from None
    if args.json:
        print(json.dumps({"since": report.since, "baselines": report.baselines, "rows": [r.to_json() for r in report.rows],
                          "queue": report.queue, "queue_state": report.queue_state, "failures": report.failures,
                          "sweeps": report.sweeps, "groups": report.groups.to_json() if report.groups else None},
                         indent=2, default=str))
        if output is None:
            return 0
    content = render(report, fmt)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(output, content if isinstance(content, bytes) else content.encode("utf-8"))
        if not args.json:
            print(f"wrote {output} ({len(report.rows)} runs)")
    else:
        print(content if isinstance(content, str) else "", end="")
    return 0
