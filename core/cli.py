"""The ``rlpanel`` command: one subcommand module per concern under ``core/commands``.

Each module in ``COMMANDS`` has ``register(subparsers, common)`` that adds its subparser(s)
and sets ``func(args) -> int``. ``--json`` makes a command print one JSON document and nothing
else on stdout; errors are one line on stderr naming the problem and the fix.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.config.errors import ConfigError

COMMANDS = [
    "core.commands.presets",
    "core.commands.train",
    "core.commands.runs",
    "core.commands.doctor",
    "core.commands.monitor",
    "core.commands.estimate",
    "core.commands.export",
    "core.commands.queue",
]


class CliError(Exception):
    """A user-facing failure: one line on stderr and exit ``code``."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def runs_dir(args: argparse.Namespace) -> Path:
    from core.util.paths import default_runs_dir

    return Path(args.runs_dir).expanduser() if getattr(args, "runs_dir", None) else default_runs_dir()


def emit(args: argparse.Namespace, data: Any, text: str | Callable[[], str]) -> None:
    """Print ``data`` as JSON with ``--json``, else the human ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str))
    else:
        print(text() if callable(text) else text)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--runs-dir", metavar="DIR", help="runs folder (default: the runs/ folder of the user folder)")
    common.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser = argparse.ArgumentParser(
        prog="rlpanel", parents=[common],
        description="Control panel for stable-baselines3 training. Without a command it opens the window.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(sub, common)
    return parser


def main(argv: list[str] | None = None, open_window: Callable[[argparse.Namespace], int] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        if open_window is not None:
            return open_window(args)
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"rlpanel {args.command}: {exc}", file=sys.stderr)
        return exc.code
    except ConfigError as exc:
        where = f" in {exc.source}" if exc.source else ""
        for issue in exc.issues:
            print(f"rlpanel {args.command}: config error{where}: {issue}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rlpanel {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # run the imported module's main: under -m this file is __main__, and the commands raise
    # core.cli.CliError, a different class from this module's copy
    from core.cli import main as _main

    sys.exit(_main())
