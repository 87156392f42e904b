"""``rlpanel runs``, ``annotate`` and ``delete``: list runs (by state or tag), one run's status and
summary, a run's display name, tags and note, and moving runs to the system's trash."""

from __future__ import annotations

import argparse
import time
from typing import Any

from core.cli.common import CliError, emit, find_run, run_path, runs_dir
from core.launch.control import RunStateError, delete_run
from core.run import resume_words
from core.run.annotations import AnnotationError, annotate
from core.run.layout import RunDir
from core.run.status import RunStatus, stall_note
from core.run.store import RunInfo, RunStore
from core.run.time_split import TimeSplit, advice, split_line
from core.telemetry.summary import memory_lines
from core.util.files import read_json
from core.util.text import format_age, format_bytes, format_duration, format_number

SHOWN_BROKEN = 10


def _auto_resume_line(auto: dict[str, Any]) -> str:
    """``1 of 2 used, after a GPU driver reset; the next at 03:14:05`` / ``... ; given up: why``."""
    line = f"{auto.get('count') or 0} of {auto.get('limit') or 0} used"
    if after := resume_words.causes(auto):
        line += f", {after}"
    if auto.get("due_at"):
        line += f"; the next at {time.strftime('%H:%M:%S', time.localtime(auto['due_at']))}"
    if auto.get("gave_up"):
        line += f"; given up: {auto['gave_up']}"
    return line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("runs", parents=[common], help="list runs (id, state, algo, env, steps, reward, age)")
    p.add_argument("run_id", nargs="?", help="show this run's status and summary instead")
    p.add_argument("--state", help="only runs in this state (e.g. running, crashed)")
    p.add_argument("--tag", help="only runs with this tag")
    p.add_argument("--group", metavar="ID", help="only the runs of this group of seeds (its id, or a unique start of it)")
    p.set_defaults(func=run)

    a = sub.add_parser("annotate", parents=[common], help="a run's display name, tags and note (the folder keeps its id)")
    a.add_argument("run_id")
    a.add_argument("--name", help="the name lists show for the run (--name '' or --clear-name: none)")
    a.add_argument("--clear-name", action="store_true", help="show the run by its config name or id again")
    a.add_argument("--tag", action="append", default=[], metavar="TAG", help="add a tag (repeatable)")
    a.add_argument("--untag", action="append", default=[], metavar="TAG", help="remove a tag (repeatable)")
    a.add_argument("--note", help="replace the note ('' clears it)")
    a.set_defaults(func=run_annotate)

    d = sub.add_parser("delete", parents=[common], help="move ended runs to the system's trash (restore them from there)")
    d.add_argument("run_ids", nargs="+", metavar="RUN_ID")
    d.set_defaults(func=run_delete)


def table(infos: list[RunInfo]) -> str:
    if not infos:
        return "no runs"
    named, tagged = any(i.label != i.id for i in infos), any(i.tags for i in infos)
    grouped = any(group_id(i) for i in infos)
    rows = [("ID", *(["NAME"] if named else []), *(["GROUP"] if grouped else []), "STATE", "ALGO", "ENV", "STEPS", "REWARD",
             "AGE", *(["TAGS"] if tagged else []))]
    for i in infos:
        steps = i.steps_text("/")
        reward = "" if i.mean_reward is None else f"{i.mean_reward:.2f}"
        rows.append((i.id, *([i.label if i.label != i.id else ""] if named else []), *([group_id(i)] if grouped else []),
                     i.state, i.algo, i.env, steps, reward, format_age(i.age_s), *([" ".join(i.tags)] if tagged else [])))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    broken = [i for i in infos if i.broken]
    if broken:
        lines += ["", f"{len(broken)} run folder(s) cannot be read (listed as broken; the files are left as they are):"]
        lines += [f"  {i.id}: {i.broken}" for i in broken[:SHOWN_BROKEN]]
        if len(broken) > SHOWN_BROKEN:
            lines.append(f"  and {len(broken) - SHOWN_BROKEN} more (rlpanel runs --state broken)")
    return "\n".join(lines)


def group_id(info: RunInfo) -> str:
    """The id of the group of seeds ``info`` was launched in ("" for a run launched alone)."""
    group = info.status.group or {}
    return str(group.get("id") or "")


def in_group(infos: list[RunInfo], wanted: str) -> list[RunInfo]:
    """The runs of group ``wanted`` (an id or a unique start of one); ``CliError`` naming the groups there are."""
    ids = sorted({gid for i in infos if (gid := group_id(i))})
    matches = [gid for gid in ids if gid == wanted] or [gid for gid in ids if gid.startswith(wanted)]
    if len(matches) != 1:
        why = "matches no group" if not matches else f"matches {len(matches)} groups ({', '.join(matches[:3])})"
        known = (f"; groups here: {', '.join(ids[-5:])}" if ids else
                 "; no run here was launched in a group (rlpanel train --seeds 5)")
        raise CliError(f"--group {wanted!r} {why}{known}", 2)
    return [i for i in infos if group_id(i) == matches[0]]


def run(args: argparse.Namespace) -> int:
    store = RunStore(runs_dir(args))
    if args.run_id:
        path = run_path(store, args.run_id)
        from core.run.status import read_status
        from core.run.store import run_info

        info = run_info(path)
        summary = read_json(RunDir(path).summary)
        status = read_status(path)
        data = {**info.to_json(), "status": status.to_json(), "summary": summary if isinstance(summary, dict) else None}
        emit(args, data, lambda: _details(data, status))
        return 0
    infos = store.list()
    if args.group:
        infos = in_group(infos, args.group)
    infos = [i for i in infos if (not args.state or i.state == args.state) and (not args.tag or args.tag in i.tags)]
    emit(args, [i.to_json() for i in infos], lambda: table(infos))
    return 0


def run_annotate(args: argparse.Namespace) -> int:
    path = find_run(args)
    clear = args.clear_name or args.name == ""
    try:
        notes = annotate(path, name=None if clear else args.name, clear_name=clear, add_tags=tuple(args.tag),
                         remove_tags=tuple(args.untag), note=args.note)
    except AnnotationError as exc:
        raise CliError(f"{exc}; nothing was changed", 2) from None
    text = f"{path.name}: name {notes.display_name or '(none)'}; tags {' '.join(notes.tags) or '(none)'}"
    emit(args, {"id": path.name, **notes.to_json()}, text + (f"; note: {notes.note}" if notes.note else ""))
    return 0


def run_delete(args: argparse.Namespace) -> int:
    store = RunStore(runs_dir(args))
    paths = [run_path(store, run_id) for run_id in args.run_ids]  # every id is checked before anything moves
    for path in paths:
        try:
            delete_run(path)
        except RunStateError as exc:
            raise CliError(str(exc)) from None
        except OSError as exc:
            raise CliError(f"could not move {path.name} to the trash: {exc}; it is still in {path.parent}") from None
    emit(args, {"deleted": [p.name for p in paths]}, "\n".join(f"moved {p.name} to the trash" for p in paths))
    return 0


HEAD_KEYS = ("id", "display_name", "tags", "note", "state", "algo", "env", "steps", "total", "mean_reward", "path")
STATUS_TIMES = (("created_at", "created"), ("started_at", "started"), ("ended_at", "ended"))


def value_text(key: str, value: Any) -> str | None:
    """A value of the status or summary as a reader wants it: numbers to 4 significant digits or with thousands
    separators, ``_bytes`` as sizes, ``_s`` as durations, ``_at`` as local times; None for nothing to say (a
    missing figure, an empty list)."""
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        if key.endswith("_bytes"):
            return format_bytes(value, gib_digits=2)
        if key.endswith("_s") and not key.endswith("_per_s"):
            return format_duration(value)
        if key.endswith("_at"):
            return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(value))
        return format_number(value)
    if isinstance(value, list | tuple):
        return ", ".join(filter(None, (value_text("", v) for v in value))) or None
    if isinstance(value, dict):
        return ", ".join(f"{k} {text}" for k, v in value.items() if (text := value_text(str(k), v)) is not None) or None
    return str(value)[:200]


def time_split_lines(data: dict[str, Any], status: RunStatus) -> list[str]:
    """Where the run's time went (the summary's split, or the status's while it trains) and the advice from it."""
    summary = data.get("summary") or {}
    split = TimeSplit.from_json(summary.get("time_split")) or TimeSplit.from_json(status.time_split)
    line = split_line(split)
    if not line:
        return []
    return [f"time: {line}", f"advice: {advice(split, status.device or 'cpu', str(data.get('algo') or ''))}"]


def _details(data: dict[str, Any], status: RunStatus) -> str:
    head = {**data, "total": data.get("total") or None}  # a baseline plans no steps: no total, not "0"
    lines = [f"{k}: {text}" for k in HEAD_KEYS if (text := value_text(k, head.get(k))) is not None]
    if data.get("broken"):
        lines.append(f"broken: {data['broken']}")
    times = {"created_at": status.created_at, "started_at": status.started_at, "ended_at": status.ended_at}
    lines += [f"{word}: {text}" for key, word in STATUS_TIMES if (text := value_text(key, times[key])) is not None]
    group = status.group or {}
    if group.get("id"):
        lines.append(f"group: {group['id']} (seed {group.get('seed')} of {group.get('size')} runs; rlpanel runs --group "
                     f"{group['id']})")
    if status.problems:
        lines.append(f"status.json problems (ignored): {', '.join(status.problems)}")
    if status.exit_reason:
        lines.append(f"exit: {status.exit_reason}")
    if status.state == "paused" and status.pause_reason:
        lines.append(f"paused: {status.pause_reason}")
    if note := stall_note(status):
        lines.append(f"stalled: {note} (runtime.on_stall: {(status.stalled or {}).get('action', 'alert')}); "
                     f"rlpanel stop {status.id or 'ID'} stops it with a checkpoint")
    auto = status.auto_resume or {}
    if auto.get("count") or auto.get("gave_up") or auto.get("due_at"):
        lines.append(f"automatic resume: {_auto_resume_line(auto)}")
    if status.paused_s:
        lines.append(f"paused for {format_duration(status.paused_s)} in all")
    if status.env_restarts:
        lines.append(f"env restarts: {status.env_restarts} (env processes replaced mid-run, each episode cut short; "
                     "the warning events say when and why)")
    lines += [f"note: {note}" for note in status.notes[:10]]
    lines += time_split_lines(data, status)
    if status.error:
        lines.append(f"error: {status.error.get('message')}")
        if status.error.get("traceback"):
            lines.append(status.error["traceback"])
    if data.get("summary"):
        lines += memory_lines(data["summary"])  # which figure each peak is, the run's own first
        lines += [f"summary.{k}: {text}" for k, v in list(data["summary"].items())[:50]
                  if (text := value_text(k, v)) is not None]
    return "\n".join(lines)
