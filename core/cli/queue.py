"""``rlpanel queue run|status|cancel|resume``: the night's plan, run by a detached runner.

``queue run --survive-reboot`` registers a start-up entry (``core.queue.autostart``) that runs ``queue resume``
when the user logs in after a restart; ``resume`` writes what it did to the queue's ``runner.log`` too, since
at log-on nobody reads its output.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from core.cli.common import CliError, emit, runs_dir
from core.cli.ray_options import add_ray_args, cluster_from_args
from core.queue.autostart import AutostartError, entry_json, standing_entry
from core.queue.control import CONTINUABLE, QueueBusy, cancel_queue, jobs_to_run, resume_queue, start_queue
from core.queue.plan import load_plan
from core.queue.record import QueueState
from core.queue.state import QueueFolder, read_queue, summary_line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("queue", parents=[common], help="run a plan of jobs (detached), see it, cancel it")
    inner = p.add_subparsers(dest="queue_command", metavar="ACTION", required=True)
    r = inner.add_parser("run", parents=[common],
                         help="start a plan file (or continue it after a crash, a failure or a cancel)")
    r.add_argument("plan", type=Path)
    r.add_argument("--restart", action="store_true", help="start the plan afresh even if an earlier run of it is unfinished")
    r.add_argument("--survive-reboot", action="store_true",
                   help="register a start-up entry that resumes the queue when you log in after a restart "
                        "(Windows: a Task Scheduler task, else a Startup-folder file; Linux: an XDG autostart entry); "
                        "removed when the queue ends")
    add_ray_args(r, "send every job to")
    r.set_defaults(func=run_plan)
    u = inner.add_parser("resume", parents=[common],
                         help="start the runner of a queue whose runner died (after a restart); what the start-up entry runs")
    u.add_argument("--home", metavar="DIR", help="the user folder to use (RLPANEL_HOME); the start-up entry passes its own")
    u.set_defaults(func=resume)
    s = inner.add_parser("status", parents=[common], help="what ran, what runs, what waits")
    s.set_defaults(func=status)
    c = inner.add_parser("cancel", parents=[common], help="stop launching jobs; running jobs finish")
    c.add_argument("--stop-running", action="store_true", help="also ask the running jobs to stop gracefully")
    c.set_defaults(func=cancel)


def run_plan(args: argparse.Namespace) -> int:
    root = runs_dir(args)
    plan = load_plan(args.plan)
    cluster = cluster_from_args(args)
    try:
        state, note = start_queue(root, plan, args.plan, restart=args.restart, cluster=cluster,
                                  survive_reboot=args.survive_reboot, import_folder=os.getcwd())
    except QueueBusy as exc:
        raise CliError(f"{exc}; see rlpanel queue status, or rlpanel queue cancel") from None
    except AutostartError as exc:
        raise CliError(f"--survive-reboot: {exc}; the queue was not started (start it without --survive-reboot)") from None
    emit(args, {"id": state.id, "state_file": str(QueueFolder(root).state), "message": note,
                "survive_reboot": entry_json(state.survive_reboot)}, note)
    return 0


def resume(args: argparse.Namespace) -> int:
    if args.home:
        os.environ["RLPANEL_HOME"] = str(Path(args.home).expanduser().resolve())  # the runner and its jobs inherit it
    root = runs_dir(args)
    state, note = resume_queue(root)
    folder = QueueFolder(root)
    if folder.path.is_dir():  # at log-on nobody reads stdout: the queue's log says what happened
        with open(folder.runner_log, "a", encoding="utf-8") as log:
            log.write(f"rlpanel queue resume ({time.strftime('%Y-%m-%d %H:%M:%S')}): {note}\n")
    emit(args, {"id": state.id if state else None, "state": state.state if state else None, "message": note}, note)
    return 0


def _table(state: QueueState) -> str:
    lines = [f"queue {state.id}: {state.state} ({summary_line(state)}); parallel {state.parallel}, "
             f"on_failure {state.on_failure}"]
    if state.ray:
        lines[0] += f"; on the Ray cluster {state.ray['address']}"
    entry = standing_entry(state)  # as the Queue tab says it: not for an ended queue or an entry removed by hand
    if entry is not None:
        lines.append(f"resumes after a restart: {entry.describe()}")
    width = max((len(j.name) for j in state.jobs), default=0)
    for job in state.jobs:
        took = ""
        if job.started_at:
            took = f"{(job.ended_at or time.time()) - job.started_at:.0f}s"
        run_id, reason = job.run_id or "-", job.reason or ""
        node = f"  on {job.node}" if job.node else ""
        lines.append(f"  {job.name:<{width}}  {job.status:<9}  {run_id:<40}  {took:>6}{node}  {reason}".rstrip())
    if state.state in CONTINUABLE:
        again = jobs_to_run(state)
        lines.append(f"rlpanel queue run with the same plan continues it: runs {', '.join(again) or 'nothing'}; "
                     "finished jobs are kept (--restart runs the whole plan again)")
    return "\n".join(lines)


def status(args: argparse.Namespace) -> int:
    state = read_queue(runs_dir(args))
    if state is None:
        emit(args, None, "no queue in this runs folder; start one with: rlpanel queue run PLAN")
        return 0
    emit(args, state.to_json(), lambda: _table(state))
    return 0


def cancel(args: argparse.Namespace) -> int:
    try:
        state = cancel_queue(runs_dir(args), args.stop_running)
    except LookupError as exc:
        raise CliError(str(exc)) from None
    what = "running jobs are asked to stop" if args.stop_running else "running jobs finish"
    emit(args, {"id": state.id, "cancel": True, "stop_running": args.stop_running},
         f"queue {state.id}: no more launches; {what}")
    return 0
