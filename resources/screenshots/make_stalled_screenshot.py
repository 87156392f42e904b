"""``stalled-monitor-WxH.png``, ``stalled-runs-WxH.png`` and ``night-settings-WxH.png`` (WxH: the logical screen):
a run whose watchdog found it stalled, in the Monitor (the status line says since when) and the Runs tab (its
state), and the Configure panel's runtime rows of issue 28 (Stalled after, On a stall, Auto-resume, Resume after).

The runs are the layout tour's (``tests.app.layout.tour.make_runs``: this process is the live run's worker); the
live run's status gets the watchdog's ``stalled`` finding. Prints what the layout checker finds cut. Under Xvfb::

    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 python resources/screenshots/make_stalled_screenshot.py
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).parent)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        runs_dir = Path(tmp) / "runs"
        runs_dir.mkdir()
        from PySide6.QtWidgets import QApplication, QScrollArea

        from app.main_window import MainWindow
        from core.run.status import write_status
        from tests.app.layout.clipping import findings
        from tests.app.layout.tour import make_runs, settle

        app = QApplication.instance() or QApplication([])
        live = make_runs(runs_dir)
        write_status(live, stall_limit_s=300.0, stalled={"since": time.time() - 420, "step": 40_704, "limit_s": 300.0,
                                                         "action": "alert"})
        window = MainWindow(runs_dir, confirm_close=False, tray=False)
        window.show()
        settle(app, 1.0)
        screen = window.screen().size()
        size = f"{screen.width()}x{screen.height()}"
        window.open_run(live)
        settle(app, 2.0)
        shots = {"stalled-monitor": window}
        window.grab().save(str(args.out / f"stalled-monitor-{size}.png"))
        print("monitor cut:", findings(window) or "nothing")
        window.tabs.setCurrentWidget(window.runs)
        settle(app, 1.0)
        window.grab().save(str(args.out / f"stalled-runs-{size}.png"))
        print("runs cut:", findings(window) or "nothing")
        row = window.findChild(object, "runtime.stall_after_s")
        scroll = row.parent()
        while scroll is not None and not isinstance(scroll, QScrollArea):
            scroll = scroll.parent()
        if scroll is not None:
            scroll.ensureWidgetVisible(row, 0, 200)
        settle(app, 0.5)
        window.grab().save(str(args.out / f"night-settings-{size}.png"))
        print("settings cut:", findings(window) or "nothing", shots and "")
    os._exit(0)  # the window's threads need no orderly end here


if __name__ == "__main__":
    sys.exit(main())
