"""``python -m app.watch_main RUN [--checkpoint C] [--stochastic]``: the Watch window alone, without the main window.

What ``rlpanel watch`` starts (the command line imports no Qt, so it runs this by module name). It lives
beside ``app.main`` rather than in ``app.agent``, whose Watch window the main window's Runs tab imports:
it borrows the main window's icon and its Ctrl+C handling from ``app.main``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """This window alone (``rlpanel watch``): until it is closed."""
    from app.entry import no_display_reason

    parser = argparse.ArgumentParser(prog="python -m app.watch_main", description="Watch a run's agent play.")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--checkpoint", default="last")
    parser.add_argument("--stochastic", action="store_true")
    args = parser.parse_args(argv)
    reason = no_display_reason()
    if reason:
        print(f"rlpanel watch: {reason.split(';')[0]}", file=sys.stderr)
        return 2
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from app.agent.watch_window import WatchWindow
    from app.main import app_icon, close_on_signals
    from app.theme import apply_theme

    QCoreApplication.setOrganizationName("rlpanel")
    QCoreApplication.setApplicationName("rlpanel")
    app = QApplication(sys.argv[:1])
    app.setWindowIcon(app_icon())
    apply_theme(app)
    window = WatchWindow(args.run_dir, args.checkpoint, args.stochastic)
    window.resize(760, 560)
    window.show()
    wake = close_on_signals(window)
    code = app.exec()
    wake.stop()
    window.stop()
    window.deleteLater()
    del window
    QCoreApplication.sendPostedEvents(None, 0)
    return code


if __name__ == "__main__":
    sys.exit(main())
