"""Start the window: ``run_app()`` is what ``rlpanel`` (no command) and ``python -m app`` call."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def run_app(runs_dir: str | Path | None = None, argv: list[str] | None = None) -> int:
    """Create the application, apply the theme, show the main window and run until it closes.

    ``RLPANEL_QUIT_AFTER_MS`` closes the window after that many milliseconds (smoke test, bench);
    ``RLPANEL_SHOWN_FILE`` names a file that gets the time the window was first shown.
    """
    from PySide6.QtCore import QCoreApplication, QTimer
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow, quit_after
    from app.theme import apply_theme
    from core.paths import default_runs_dir

    QCoreApplication.setOrganizationName("rlpanel")
    QCoreApplication.setApplicationName("rlpanel")
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    apply_theme(app)
    folder = Path(runs_dir).expanduser() if runs_dir else default_runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    quit_ms = os.environ.get("RLPANEL_QUIT_AFTER_MS")
    window = MainWindow(folder, confirm_close=not quit_ms)
    window.show()
    shown_file = os.environ.get("RLPANEL_SHOWN_FILE")
    if shown_file:
        import time

        # Written once the event loop has painted the first frame, i.e. the user sees the window.
        QTimer.singleShot(0, lambda: Path(shown_file).write_text(repr(time.time())))
    if quit_ms:
        quit_after(int(quit_ms))
    code = app.exec()
    # Tear the widgets down while Qt is still alive: left to interpreter shutdown, PySide6 may
    # crash garbage-collecting them (exit 134 instead of 0).
    window.deleteLater()
    del window
    QCoreApplication.sendPostedEvents(None, 0)
    import gc

    gc.collect()
    gc.freeze()  # what is left belongs to modules: keep the exit-time collection away from it
    return code
