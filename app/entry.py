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


def main(argv: list[str] | None = None) -> int:
    from core.cli.main import main as cli_main

    return cli_main(argv, open_window=_open_window)


if __name__ == "__main__":
    sys.exit(main())
