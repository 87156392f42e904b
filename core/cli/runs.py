"""``rlpanel runs``: the runs in the runs folder, or one run's status and summary."""

from __future__ import annotations

import argparse
from typing import Any

from core.cli.common import CliError, emit, runs_dir
from core.run.layout import RunDir
from core.run.store import RunInfo, RunStore
from core.util.files import read_json
from core.util.text import format_age

SHOWN_BROKEN = 10


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("runs", parents=[common], help="list runs (id, state, algo, env, steps, reward, age)")
    p.add_argument("run_id", nargs="?", help="show this run's status and summary instead")
    p.add_argument("--state", help="only runs in this state (e.g. running, crashed)")
    p.set_defaults(func=run)


def table(infos: list[RunInfo]) -> str:
    if not infos:
        return "no runs"
    rows = [("ID", "STATE", "ALGO", "ENV", "STEPS", "REWARD", "AGE")]
    for i in infos:
        steps = f"{i.steps:,}" + (f"/{i.total:,}" if i.total else "")
        reward = "" if i.mean_reward is None else f"{i.mean_reward:.2f}"
        rows.append((i.id, i.state, i.algo, i.env, steps, reward, format_age(i.age_s)))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    broken = [i for i in infos if i.broken]
    if broken:
        lines += ["", f"{len(broken)} run folder(s) cannot be read (listed as broken; the files are left as they are):"]
        lines += [f"  {i.id}: {i.broken}" for i in broken[:SHOWN_BROKEN]]
        if len(broken) > SHOWN_BROKEN:
            lines.append(f"  and {len(broken) - SHOWN_BROKEN} more (rlpanel runs --state broken)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    store = RunStore(runs_dir(args))
    if args.run_id:
        try:
            path = store.path(args.run_id)
        except KeyError as exc:
            raise CliError(f"{exc.args[0]}; list them with: rlpanel runs") from None
        from core.run.status import read_status
        from core.run.store import run_info

        info = run_info(path)
        summary = read_json(RunDir(path).summary)
        data = {**info.to_json(), "status": read_status(path), "summary": summary if isinstance(summary, dict) else None}
        emit(args, data, lambda: _details(data))
        return 0
    infos = [i for i in store.list() if not args.state or i.state == args.state]
    emit(args, [i.to_json() for i in infos], lambda: table(infos))
    return 0


def _details(data: dict[str, Any]) -> str:
    lines = [f"{k}: {data[k]}" for k in ("id", "state", "algo", "env", "steps", "total", "mean_reward", "path")]
    if data.get("broken"):
        lines.append(f"broken: {data['broken']}")
    status = data["status"]
    if status.get("problems"):
        lines.append(f"status.json problems (ignored): {', '.join(status['problems'])}")
    if status.get("exit_reason"):
        lines.append(f"exit: {status['exit_reason']}")
    lines += [f"note: {note}" for note in (status.get("notes") or [])[:10]]
    if status.get("error"):
        lines.append(f"error: {status['error'].get('message')}")
        if status["error"].get("traceback"):
            lines.append(status["error"]["traceback"])
    if data.get("summary"):
        lines += [f"summary.{k}: {str(v)[:200]}" for k, v in list(data["summary"].items())[:50]]
    return "\n".join(lines)
