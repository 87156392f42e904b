"""The frame of every ``python -m core.agent.<tool>``: the common arguments, one JSON line out, one line on failure."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.config.errors import ConfigError
from core.run.store import unusable_config
from core.util.files import describe_os_error

DONE_TO_A_RUN = {"evaluate": "evaluated", "export": "exported", "record": "recorded", "play": "played", "hub": "published"}


def tool_parser(prog: str) -> argparse.ArgumentParser:
    """RUN_DIR, ``--checkpoint last|best|STEP``, ``--seed`` and ``--device``, which every tool takes."""
    parser = argparse.ArgumentParser(prog=f"python -m core.agent.{prog}")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--checkpoint", default="last", help="last (default), best, or a step the run keeps")
    parser.add_argument("--seed", type=int, default=None, help="the env's seed (default: the run's seed + 20,000)")
    parser.add_argument("--device", default="cpu", help="torch device for the policy (default cpu)")
    return parser


def tool_main(parser: argparse.ArgumentParser, work: Callable[[argparse.Namespace], dict[str, Any]],
              argv: list[str] | None = None) -> int:
    """Parse, do the work, print its result as the last stdout line; a failure is one line on stderr, exit 1."""
    args = parser.parse_args(argv)
    try:
        result = work(args)
    except ConfigError as exc:  # the run's config.yaml (damaged, missing): the same line as the command line's
        tool = parser.prog.rsplit(".", 1)[-1]
        print(unusable_config(args.run_dir, exc, DONE_TO_A_RUN.get(tool, "used")), file=sys.stderr)
        return 1
    except (LookupError, ValueError, OSError, ImportError) as exc:  # what a user can fix: said in one line
        print(_one_line(exc), file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - the traceback for the log, the last line for the message
        traceback.print_exc()
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, default=str), flush=True)
    return 0


def _one_line(exc: Exception) -> str:
    """A user's error as a line: an ImportError named; a KeyError's message without the quotes its str() adds
    (only those: a message may end in a quoted command, as the export's missing extra does)."""
    if isinstance(exc, ImportError):
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return str(exc.args[0])
    if isinstance(exc, OSError) and exc.errno is not None:  # "[Errno 28] ..." in words, a full disk with its fix
        return describe_os_error(exc)
    return str(exc)
