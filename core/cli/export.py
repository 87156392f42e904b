"""``rlpanel export``: a results table of chosen runs (with a baseline) as md, csv, xlsx, tex, html or json; with
``--group-by`` one row per group of seeds with its statistics (``core.results.group_table``), and where the groups
span several envs the summary across them (``--reference``, ``--profile``: ``core.results.multienv``)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

from core.cli.common import CliError, runs_dir
from core.results.baselines import env_baselines
from core.results.export import FORMATS, ExportError, export, export_table, format_for
from core.results.group_table import GroupTable, group_results
from core.results.multienv import MultiEnvSummary, multi_env_summary, parse_references
from core.results.profile_svg import profile_svg
from core.results.table import results, select_runs
from core.run.states import TERMINAL
from core.run.store import RunInfo, RunStore, run_info
from core.util.files import write_atomic, write_failed

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
    p.add_argument("--baseline", metavar="RUN", action="append",
                   help="compare every run's final mean reward with this run's (its row comes first); with --group-by "
                        "its group is its env's baseline group: repeat it for other envs (default with --group-by, as "
                        "in rlpanel report: each env's newest finished random or constant run)")
    p.add_argument("--group-by", choices=("group", "config"),
                   help="one row per group of seeds: the runs launched together (group) or of one config but the seed "
                        "(config), with mean ± std. error, 95%% CI, IQM and the test against the baseline group")
    p.add_argument("--include-unfinished", action="store_true",
                   help="with --group-by: count the runs of a group that did not finish (crashed, stopped, "
                        "failed, running) in its statistics; by default they are left out and listed")
    p.add_argument("--reference", action="append", metavar="ENV=SCORE",
                   help="with --group-by over several envs: the score that normalises ENV's scores to 1 (the baseline "
                        "is 0), e.g. --reference CartPole-v1=500; without it a score is normalised by |baseline|")
    p.add_argument("--profile", metavar="FILE.svg",
                   help="with --group-by over several envs: write the performance profile (fraction of runs with "
                        "normalised score > tau) as SVG")
    p.add_argument("--grid-g-per-kwh", type=float, metavar="G",
                   help="the grid's CO2 intensity in g/kWh (e.g. 350): adds a CO2 estimate from each run's GPU energy")
    p.add_argument("--format", choices=(*FORMATS, "json"),
                   help="table format (default: from -o's suffix, else md); json: the rows, or with --group-by "
                        "{protocol, groups}")
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


def _format(args: argparse.Namespace, output: Path | None) -> str:
    if args.format == "json" or (args.format is None and output is not None and output.suffix.lower() == ".json"):
        return "json"
    try:
        return format_for(args.format, output) if (args.format or output) else "md"
    except ExportError as exc:
        raise CliError(f"{exc} (or pass --format)", 2) from None


def _check_group_options(args: argparse.Namespace) -> dict[str, float]:
    """The grouped table's own options, checked: --reference ENV=SCORE, --profile FILE.svg, --include-unfinished (all
    need --group-by)."""
    for flag, value in (("--reference", args.reference), ("--profile", args.profile)):
        if value and not args.group_by:
            raise CliError(f"{flag} belongs to the summary across envs of groups: add --group-by group (or config)", 2)
    if args.include_unfinished and not args.group_by:
        raise CliError("--include-unfinished counts the unfinished runs of seed groups (a table of runs keeps every run, "
                       "marked): add --group-by group (or config)", 2)
    if len(args.baseline or []) > 1 and not args.group_by:
        raise CliError("a table of runs compares with one --baseline; give --group-by to compare each env's groups "
                       "with the baseline of that env", 2)
    if args.profile and Path(args.profile).suffix.lower() != ".svg":
        raise CliError(f"--profile {args.profile}: the profile is written as SVG; name a .svg file", 2)
    if args.profile and Path(args.profile).expanduser().exists() and not args.overwrite:
        raise CliError(f"{args.profile} exists; pass --overwrite to replace it or choose another --profile FILE", 2)
    try:
        return parse_references(args.reference)
    except ValueError as exc:
        raise CliError(str(exc), 2) from None


def run(args: argparse.Namespace) -> int:
    store = RunStore(runs_dir(args))
    output = Path(args.output).expanduser() if args.output else None
    fmt = _format(args, output)
    references = _check_group_options(args)
    if fmt == "xlsx" and output is None:
        raise CliError("xlsx is a binary file and is not printed: give a file with -o, e.g. -o night.xlsx", 2)
    if output is not None and output.exists() and not args.overwrite:
        raise CliError(f"{output} exists; pass --overwrite to replace it or choose another -o FILE", 2)
    try:
        dirs = select_runs(store, ids=args.runs, all=args.all, since=_since(args.since), states=_states(args.state))
        baselines = [store.path(b) for b in args.baseline or []]
    except KeyError as exc:
        raise CliError(f"{exc.args[0]}; list the runs with: rlpanel runs") from None
    for path in baselines:
        if run_info(path).broken:
            raise CliError(f"the baseline run {path.name} cannot be read ({run_info(path).broken}); choose another")
    baseline = baselines[0] if baselines else None
    dirs, broken = _readable(dirs)
    for info in broken[:SHOWN_BROKEN]:
        print(f"rlpanel export: skipped {info.id}: it cannot be read ({info.broken})", file=sys.stderr)
    if len(broken) > SHOWN_BROKEN:
        print(f"rlpanel export: and {len(broken) - SHOWN_BROKEN} more broken runs skipped", file=sys.stderr)
    if not dirs and baseline is None:
        raise CliError(f"no runs match in {store.root}; list them with: rlpanel runs")
    if args.group_by:
        return _export_groups(args, store, dirs, baselines, references, fmt, output)
    rows = results(dirs, baseline=baseline, grid_g_per_kwh=grid_intensity(args.grid_g_per_kwh))
    if fmt == "json":
        _write_or_print(json.dumps([r.to_json() for r in rows], indent=2, default=str) + "\n", output)
        return 0
    content = export(rows, fmt, output, raw=args.raw)
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2, default=str))
    elif output is None:
        _print_text(str(content))
    if output is not None:
        print(f"wrote {len(rows)} runs to {output} ({fmt})", file=sys.stderr)
    return 0


def _export_groups(args: argparse.Namespace, store: RunStore, dirs: list[Path], baselines: list[Path],
                   references: dict[str, float], fmt: str, output: Path | None) -> int:
    try:
        baselines = _group_baselines(store, dirs, baselines)
        table = group_results(dirs, args.group_by, baselines, grid_g_per_kwh=grid_intensity(args.grid_g_per_kwh),
                              include_unfinished=args.include_unfinished)
    except ValueError as exc:
        raise CliError(f"--baseline: {exc}", 2) from None
    summary = multi_env_summary(table, references)
    if args.profile:
        if summary is None:
            raise CliError("--profile: the groups are of one env; a performance profile compares several envs", 2)
        _write_text(Path(args.profile).expanduser(), profile_svg(summary))
        print(f"wrote the performance profile to {args.profile}", file=sys.stderr)
    if fmt == "json" or args.json:
        text = json.dumps(_groups_json(table, summary), indent=2, default=str) + "\n"
        if fmt == "json":
            _write_or_print(text, output)
            return 0
        print(text, end="")
    content = export_table(table, fmt, output, raw=args.raw, summary=summary)
    if output is None and not args.json:
        _print_text(str(content))
    if output is not None:
        print(f"wrote {len(table.rows)} groups to {output} ({fmt})", file=sys.stderr)
    return 0


def _group_baselines(store: RunStore, dirs: list[Path], named: list[Path]) -> list[Path]:
    """Each env's baseline run as the morning report picks it (``env_baselines``: the one named, else the newest
    finished random or constant run of that env); says on stderr which were picked, not named."""
    envs = list(dict.fromkeys(run_info(d).env for d in [*named, *dirs]))
    chosen = env_baselines(store.list(), envs, named)
    picked = {env: path for env, path in chosen.items() if path is not None and path not in named}
    for env, path in picked.items():
        print(f"rlpanel export: {env}'s groups are compared with {path.name}, the newest finished random or constant "
              f"run of {env} (--baseline RUN names another)", file=sys.stderr)
    return [path for path in chosen.values() if path is not None]


def _groups_json(table: GroupTable, summary: MultiEnvSummary | None) -> dict[str, object]:
    out = table.to_json()
    if summary is not None:
        out["multi_env"] = summary.to_json()
    return out


def _write_or_print(text: str, output: Path | None) -> None:
    if output is None:
        _print_text(text)
        return
    _write_text(output, text)
    print(f"wrote {output} (json)", file=sys.stderr)


def _write_text(path: Path, text: str) -> None:
    """Written whole under a temporary name, then renamed, or ``WriteFailed`` naming ``path`` (no "wrote" line)."""
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise write_failed(path, exc) from None


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
