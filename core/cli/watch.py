"""``rlpanel watch RUN``: the agent plays a checkpoint in a window of its own, at the env's frame rate.

The command line imports no Qt (``core`` never does): it starts the window's Watch panel as a child
process, ``python -m app.watch_main RUN``, by module name, and waits for it to be closed. That window
starts ``python -m core.agent.play --stream`` in turn; the run is only read, a run still training included.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from core.cli.common import add_checkpoint_arg, checked_checkpoint, checked_config, find_run
from core.util.paths import CODE_ROOT
from core.util.procs import child_env

WATCH_MODULE = "app.watch_main"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("watch", parents=[common], help="watch a run's agent play, in a window",
                       description="Open a window where a checkpoint of RUN plays at the env's own frame rate, with "
                                   "the episode, step and reward; pause, restart or pick another checkpoint there.")
    p.add_argument("run_id", metavar="RUN", help="the run (a unique id prefix is enough)")
    add_checkpoint_arg(p)
    p.add_argument("--stochastic", action="store_true", help="sample the policy's actions (default: its most likely one)")
    p.set_defaults(func=run)


def watch_command(run_dir: str, checkpoint: str, stochastic: bool = False) -> list[str]:
    """``python -m app.watch_main RUN --checkpoint C``."""
    return [sys.executable, "-m", WATCH_MODULE, run_dir, "--checkpoint", checkpoint, *(["--stochastic"] if stochastic else [])]


def run(args: argparse.Namespace) -> int:
    path = find_run(args)
    checked_config(path, "watched")
    checked_checkpoint(path, args.checkpoint, args.command)
    # the window's own errors (no display, a checkpoint it cannot load) go to this terminal: it inherits stderr
    return subprocess.call(watch_command(str(path), args.checkpoint, args.stochastic), env=child_env(),
                           cwd=str(CODE_ROOT), stdin=subprocess.DEVNULL)
