"""``monitor-24h-run-opened.png``: a 24 h run (``bench.gui_scale.write_run``, ``BENCH_HOURS``) opened in the Monitor.

The run's cache is the one its worker leaves (``core.run.cache.writer``); this process is its worker, so the run
shows as running. Prints how long the open took (to the history on screen) and what the layout checker finds cut.
Under Xvfb at 1280x720 logical::

    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 BENCH_HOURS=24 python resources/screenshots/make_long_run_screenshot.py
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
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).parent / "monitor-24h-run-opened.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        from PySide6.QtWidgets import QApplication

        from app.main_window import MainWindow
        from bench.gui_scale import HOURS, write_run
        from core.run.cache.writer import CacheWriter
        from tests.app.layout.clipping import findings
        from tests.app.layout.tour import settle

        app = QApplication.instance() or QApplication([])
        run = write_run(Path(tmp) / "runs")
        CacheWriter(run).update(min_bytes=1)
        window = MainWindow(run.parent, confirm_close=False, tray=False)
        window.resize(window.screen().availableSize())
        window.show()
        window.tabs.setCurrentWidget(window.monitor)
        settle(app, 1.5)
        start = time.perf_counter()
        window.follow_run(run)
        while window.monitor.loading or window.monitor.held:
            app.processEvents()
            time.sleep(0.001)
        print(f"a {HOURS:g} h run opened (history in, plots released) in {time.perf_counter() - start:.2f} s")
        settle(app, 1.5)
        window.grab().save(str(args.out))
        print("cut:", findings(window) or "nothing")
    os._exit(0)  # the window's threads need no orderly end here


if __name__ == "__main__":
    sys.exit(main())
