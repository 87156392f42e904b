"""The ``rlpanel`` console script: subcommands go to ``core.cli``; no subcommand opens the window."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping


def no_display_reason(platform: str = sys.platform, env: Mapping[str, str] | None = None) -> str | None:
    """Why no window can open here (Linux without a display), or None. Qt would abort instead."""
    env = os.environ if env is None else env
    if platform.startswith("linux") and not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("QT_QPA_PLATFORM")):
        return ("no display to open the window on (DISPLAY is not set); use a command instead (rlpanel --help), "
                "e.g. rlpanel train ...")
    return None


def _open_window(args: argparse.Namespace) -> int:
    reason = no_display_reason()
    if reason:
        print(f"rlpanel: {reason}", file=sys.stderr)
        return 2
    from app.main import run_app

    return run_app(runs_dir=args.runs_dir)


def gui_main() -> int:
    """The ``rlpanel-gui`` gui-script: the window alone, with no console on Windows (pythonw)."""
    reason = no_display_reason()
    if reason:
        if sys.stderr is not None:  # pythonw has no stderr
            print(f"rlpanel-gui: {reason}", file=sys.stderr)
        return 2
    from app.main import run_app

    return run_app()


def window_only(argv: list[str]) -> argparse.Namespace | None:
    """The window's own command line (nothing, or ``--runs-dir DIR``), read without the command parser: building
    that imports every command, scipy and optuna with them, which the window does not wait for. None: anything else,
    for ``core.cli`` (a command, ``--help``, a mistake it explains)."""
    if not argv:
        return argparse.Namespace(runs_dir=None, json=False, command=None)
    if len(argv) == 1 and argv[0].startswith("--runs-dir=") and len(argv[0]) > len("--runs-dir="):
        return argparse.Namespace(runs_dir=argv[0].partition("=")[2], json=False, command=None)
    if len(argv) == 2 and argv[0] == "--runs-dir" and argv[1] and not argv[1].startswith("-"):
        return argparse.Namespace(runs_dir=argv[1], json=False, command=None)
    return None


def main(argv: list[str] | None = None) -> int:
    from core.util.console import safe_streams

    safe_streams()  # the window's messages to a redirected stderr: cp1252 on Windows, no character may raise
    window = window_only(sys.argv[1:] if argv is None else argv)
    if window is not None:
        return _open_window(window)
    from core.cli.main import main as cli_main

    return cli_main(argv, open_window=_open_window)


if __name__ == "__main__":
    sys.exit(main())
