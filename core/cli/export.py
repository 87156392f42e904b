"""``rlpanel export``: a results table of chosen runs (with a baseline) as md, csv, xlsx, tex or html."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

from core.cli.common import CliError, runs_dir
from core.results.export import FORMATS, ExportError, export, format_for
from core.results.table import results, select_runs
from core.run.states import TERMINAL
from core.run.store import RunInfo, RunStore, run_info

SHOWN_BROKEN = 10


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export", parents=[common], help="a results table of runs (md, csv, xlsx, tex, html)",
                       description="One row per run: reward, time, steps/s, peak GPU memory and, with --baseline, "
                                   "the change of final mean reward against the baseline run.")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--runs", nargs="+", metavar="RUN", help="these runs, in this order (a unique id prefix is enough)")
    which.add_argument("--all", action="store_true", help="every run in the runs folder, oldest first")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="only runs started on or after this date")
    p.add_argument("--state", action="append", metavar="STATE",
                   help=f"only runs in this state ({', '.join(TERMINAL)}, running, ...); repeat or comma-separate")
    p.add_argument("--baseline", metavar="RUN",
                   help="compare every run's final mean reward with this run's (its row comes first)")
    p.add_argument("--grid-g-per-kwh", type=float, metavar="G",
                   help="the grid's CO2 intensity in g/kWh (e.g. 350): adds a CO2 estimate from each run's GPU energy")
    p.add_argument("--format", choices=FORMATS, help="table format (default: from -o's suffix, else md)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (needed for xlsx); text formats go to stdout without it")
    p.add_argument("--overwrite", action="store_true", help="replace an existing FILE")
    p.add_argument("--raw", action="store_true",
                   help="CSV: every float at full precision (default: 6 significant digits, e.g. 7.07018)")
    p.set_defaults(func=run)


def _since(text: str | None) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CliError(f"--since {text!r} is not a date; write it as YYYY-MM-DD, e.g. --since 2026-11-20", 2) from None


def grid_intensity(value: float | None) -> float | None:
    """``--grid-g-per-kwh``, checked: a positive figure up to 2,000 g/kWh (coal is about 1,000)."""
    if value is None:
        return None
    if not 0 < value <= 2000:
        raise CliError(f"--grid-g-per-kwh {value:g} is out of range: give the grid's CO2 intensity in g/kWh, "
                       "between 0 and 2,000 (e.g. 350)", 2)
    return value


def _states(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [s.strip() for v in values for s in v.split(",") if s.strip()]


def run(args: argparse.Namespace) -> int:
    store = RunStore(runs_dir(args))
    output = Path(args.output).expanduser() if args.output else None
    try:
        fmt = format_for(args.format, output) if (args.format or output) else "md"
    except ExportError as exc:
        raise CliError(f"{exc} (or pass --format)", 2) from None
    if fmt == "xlsx" and output is None:
        raise CliError("xlsx is a binary file and is not printed: give a file with -o, e.g. -o night.xlsx", 2)
    if output is not None and output.exists() and not args.overwrite:
        raise CliError(f"{output} exists; pass --overwrite to replace it or choose another -o FILE", 2)
    try:
        dirs = select_runs(store, ids=args.runs, all=args.all, since=_since(args.since), states=_states(args.state))
        baseline = store.path(args.baseline) if args.baseline else None
    except KeyError as exc:
        raise CliError(f"{exc.args[0]}; list the runs with: rlpanel runs") from None
    if baseline is not None and run_info(baseline).broken:
        raise CliError(f"the baseline run {baseline.name} cannot be read ({run_info(baseline).broken}); choose another")
    dirs, broken = _readable(dirs)
    for info in broken[:SHOWN_BROKEN]:
        print(f"rlpanel export: skipped {info.id}: it cannot be read ({info.broken})", file=sys.stderr)
    if len(broken) > SHOWN_BROKEN:
        print(f"rlpanel export: and {len(broken) - SHOWN_BROKEN} more broken runs skipped", file=sys.stderr)
    if not dirs and baseline is None:
        raise CliError(f"no runs match in {store.root}; list them with: rlpanel runs")
    rows = results(dirs, baseline=baseline, grid_g_per_kwh=grid_intensity(args.grid_g_per_kwh))
    content = export(rows, fmt, output, raw=args.raw)
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2, default=str))
    elif output is None:
        _print_text(str(content))
    if output is not None:
        print(f"wrote {len(rows)} runs to {output} ({fmt})", file=sys.stderr)
    return 0


def _readable(dirs: list[Path]) -> tuple[list[Path], list[RunInfo]]:
    """The run folders that can be read, and the broken ones (listed, never exported)."""
    infos = [run_info(d) for d in dirs]
    return [i.path for i in infos if not i.broken], [i for i in infos if i.broken]


def _print_text(text: str) -> None:
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # a console in a legacy code page: Δ and ° as UTF-8 bytes
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()
