"""``rlpanel tensorboard RUN_ID``: TensorBoard on one run's logs, on a free local port, until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
import time
import webbrowser

from core.cli.common import CliError, emit, find_run
from core.run.tensorboard import TensorBoard, TensorBoardError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("tensorboard", parents=[common],
                       help="open TensorBoard on a run's logs (127.0.0.1, a free port; Ctrl-C stops it)")
    p.add_argument("run_id")
    p.add_argument("--port", type=int, help="the port to serve on (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the address, do not open a browser")
    p.add_argument("--for", dest="seconds", type=float, metavar="S", help="stop after S seconds (default: at Ctrl-C)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    run_dir = find_run(args)
    if args.port is not None and not 1 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: use a port between 1 and 65535, or leave it out for a free one", 2)
    board = TensorBoard(run_dir, args.port)
    try:
        board.start()
        url = board.wait_ready()
    except TensorBoardError as exc:
        board.stop()
        raise CliError(str(exc)) from None
    emit(args, {"id": run_dir.name, "url": url, "pid": board.proc.pid if board.proc else None},
         f"TensorBoard for {run_dir.name}: {url}  (Ctrl-C stops it)")
    sys.stdout.flush()
    if not args.no_browser:
        webbrowser.open(url)
    try:
        deadline = time.monotonic() + args.seconds if args.seconds else None
        while board.running() and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        board.stop()
    return 0
