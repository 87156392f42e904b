"""The ``rlpanel`` command: the parser, built from one module per command.

Each module in ``COMMANDS`` has ``register(subparsers, common)`` that adds its subparser(s)
and sets ``func(args) -> int``; a command line that names a command imports only its module
(``COMMAND_MODULES``). ``--json`` makes a command print one JSON document and nothing
else on stdout; errors are one line on stderr naming the problem and the fix. A reader that
closes the pipe early (``rlpanel runs | head``) ends the command quietly with 141 (128 + SIGPIPE,
as a shell reports ``yes | head``), the recipe of Python's signal documentation.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from core.cli.common import CliError
from core.config.errors import SHOWN_ISSUES, ConfigError, one_line
from core.util.console import safe_streams
from core.util.files import describe_os_error

# the command modules of core.cli, in the order ``rlpanel --help`` lists their commands
COMMANDS = ["presets", "train", "runs", "doctor", "monitor", "estimate", "calibrate", "evaluate", "export",
            "export_policy", "report", "queue", "sweep", "zoo", "tensorboard", "shortcut", "tune", "notify", "record",
            "watch", "hub", "sync"]
# the module that registers each command: a command line naming one imports that module alone (all of them import
# scipy, optuna and the rest: ~4 s of a start); tests/core/cli/test_cli_main.py checks it against the registrations
COMMAND_MODULES = {
    "presets": "presets", "train": "train", "resume": "train", "restart": "train", "stop": "train", "runs": "runs",
    "annotate": "runs", "delete": "runs", "doctor": "doctor", "monitor": "monitor", "estimate": "estimate",
    "gpus": "estimate", "calibrate": "calibrate", "evaluate": "evaluate", "export": "export",
    "export-policy": "export_policy", "report": "report", "queue": "queue", "sweep": "sweep", "zoo": "zoo",
    "tensorboard": "tensorboard", "shortcut": "shortcut", "tune": "tune", "notify": "notify", "record": "record",
    "watch": "watch", "hub": "hub", "sync": "sync",
}


class UsageError(Exception):
    """A command line argparse refused; its message already printed."""


class Parser(argparse.ArgumentParser):
    """argparse with short errors: the problem and where the options are listed, in two lines, then
    ``UsageError`` (``main`` returns 2) instead of a page of usage and ``SystemExit``."""

    def error(self, message: str) -> NoReturn:
        refused = re.fullmatch(r"argument (--[\w-]+)(?:/\S+)?: expected one argument", message)
        if refused:  # ``--name -x``: argparse takes ``-x`` for an option
            message += f" (a value that starts with '-' is written {refused.group(1)}=VALUE)"
        print(f"{self.prog}: {one_line(message)}", file=sys.stderr)
        print(f"{self.prog} --help lists the options", file=sys.stderr)
        raise UsageError(message)


def build_parser(modules: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser with the commands of ``modules`` (names in ``COMMANDS``; default all of them)."""
    parser = Parser(
        prog="rlpanel", parents=[_common_options(None)],
        description="Control panel for stable-baselines3 training. Without a command it opens the window.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # the commands' copies default to "not given", so `rlpanel --runs-dir X doctor` keeps X (a command's own default
    # would overwrite what the top level parsed); `rlpanel doctor --runs-dir X` sets it as before
    common = _common_options(argparse.SUPPRESS)
    for name in COMMANDS if modules is None else modules:
        importlib.import_module(f"core.cli.{name}").register(sub, common)
    return parser


def _common_options(default: Any) -> argparse.ArgumentParser:
    """``--runs-dir`` and ``--json``, which every command takes before or after its name."""
    common = Parser(add_help=False)
    common.add_argument("--runs-dir", metavar="DIR", default=default,
                        help="runs folder (default: the runs/ folder of the user folder)")
    common.add_argument("--json", action="store_true", default=False if default is None else default,
                        help="print one JSON document on stdout")
    return common


def command_word(argv: list[str]) -> str | None:
    """The command a command line names: its first word that is neither an option nor ``--runs-dir``'s value."""
    words = iter(argv)
    for word in words:
        if word == "--runs-dir":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE


def main(argv: list[str] | None = None, open_window: Callable[[argparse.Namespace], int] | None = None) -> int:
    safe_streams()  # a redirected stream on Windows is cp1252: no character printed may end the command
    try:
        code = _main(argv, open_window)
        sys.stdout.flush()  # inside the try: what is still buffered meets the closed pipe here
    except BrokenPipeError:
        # stdout points at devnull so the interpreter's own flush at exit finds no closed pipe to complain about
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE_EXIT
    return code


def _main(argv: list[str] | None, open_window: Callable[[argparse.Namespace], int] | None) -> int:
    module = COMMAND_MODULES.get(command_word(sys.argv[1:] if argv is None else argv) or "")
    parser = build_parser([module] if module else None)  # an unknown word: every command, for argparse's choices
    try:
        args = parser.parse_args(argv)
    except UsageError:
        return 2
    if not args.command:
        if open_window is not None:
            return open_window(args)
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"rlpanel {args.command}: {one_line(str(exc))}", file=sys.stderr)
        return exc.code
    except ConfigError as exc:
        where = f" in {one_line(exc.source)}" if exc.source else ""
        for issue in exc.issues[:SHOWN_ISSUES]:
            print(f"rlpanel {args.command}: config error{where}: {issue}", file=sys.stderr)
        if len(exc.issues) > SHOWN_ISSUES:
            print(f"rlpanel {args.command}: and {len(exc.issues) - SHOWN_ISSUES:,} more config errors", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise  # the reader of stdout went away: main ends quietly
    except OSError as exc:  # a full disk, a folder that cannot be written: one line, not a traceback
        print(f"rlpanel {args.command}: {describe_os_error(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"rlpanel {args.command}: interrupted", file=sys.stderr)
        return 130
