"""The window's first frame and the same window a moment later (issue 29), at 1280x720 logical.

    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 python resources/screenshots/make_startup_screenshots.py [OUT_DIR]

Writes ``startup-first-frame-1280x720.png`` (what the first frame holds: the toolbar, Configure with the algorithm's
form shown, the tab bar, the Monitor's "Starting the plots…" while the estimate reads the env's spaces) and
``startup-after-1280x720.png`` (2.5 s later: the Monitor's plots, the spaces and the fit estimate, all by themselves).
An empty runs folder and a user folder of its own: nothing saved is restored.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = str(Path(tmp) / "home")
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication

        from app.main_window import MainWindow
        from app.theme import apply_theme

        app = QApplication(sys.argv[:1])
        apply_theme(app, plots=False)  # as app.main.run_app: pyqtgraph comes with the Monitor
        window = MainWindow(Path(tmp) / "runs", confirm_close=False, tray=False)
        window.resize(1280, 720)

        def later() -> None:
            window.grab().save(str(out / "startup-after-1280x720.png"))
            window.close()
            app.quit()

        def first() -> None:
            window.grab().save(str(out / "startup-first-frame-1280x720.png"))
            QTimer.singleShot(2500, later)

        window.first_frame.connect(first)
        window.show()
        app.exec()
    return 0


if __name__ == "__main__":
    sys.exit(main())
