"""The ``rlpanel`` console script: subcommands go to ``core.cli``; no subcommand opens the window."""

from __future__ import annotations

import argparse
import sys


def _open_window(args: argparse.Namespace) -> int:
    from app.main import run_app

    return run_app(runs_dir=args.runs_dir)


def main(argv: list[str] | None = None) -> int:
    from core.cli import main as cli_main

    return cli_main(argv, open_window=_open_window)


if __name__ == "__main__":
    sys.exit(main())
