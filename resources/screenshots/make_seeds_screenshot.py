"""``configure-seeds-WxH.png`` and ``runs-seed-group-WxH.png`` (WxH: the logical screen): the Seeds field beside
Launch, and the Runs tab with a real group of seeds (three runs of the random baseline, through ``start_group``).

Prints what the layout checker (``tests/app/layout/clipping.py``) finds cut in each view. Under Xvfb::

    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 python resources/screenshots/make_seeds_screenshot.py

or on a screen of another size, offscreen (a JSON screen file, as the layout tests do)::

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json python resources/screenshots/make_seeds_screenshot.py
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


def launch_group(runs_dir: Path) -> None:
    from core.config.validate import validate_config
    from core.launch.start import start_group
    from core.run.states import TERMINAL
    from core.run.status import read_status
    from core.run.store import RunStore

    config = validate_config({"algo": "random", "name": "random-cartpole", "budget": {"episodes": 5}}).config
    group = start_group(RunStore(runs_dir), config, [0, 1, 2], reap=False)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not all(read_status(r.run_dir).state in TERMINAL for r in group.runs):
        time.sleep(0.5)


def settle(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--seeds", default="5", help="what the Seeds field shows")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        runs_dir = Path(tmp) / "runs"
        launch_group(runs_dir)
        from PySide6.QtWidgets import QApplication

        from app.main_window import MainWindow
        from tests.app.layout.clipping import findings

        app = QApplication.instance() or QApplication([])
        window = MainWindow(runs_dir, confirm_close=False, tray=False)
        window.show()
        deadline = time.monotonic() + 120
        while not window.configure.model.settled() and time.monotonic() < deadline:
            settle(app, 0.05)
        window.configure.select_preset("fast")
        window.configure.seeds_edit.setText(args.seeds)
        settle(app, 1.0)
        screen = window.screen().size()  # the logical screen: 1280x720 is 1920x1080 at 150 %
        size = f"{screen.width()}x{screen.height()}"
        for view, tab in (("configure-seeds", window.configure), ("runs-seed-group", window.runs)):
            if tab is window.runs:
                window.tabs.setCurrentWidget(window.runs)
                window.runs.refresh()
                settle(app, 2.0)
            else:
                window.configure.presets_toggle.setChecked(False)
                settle(app, 0.5)
            path = args.out / f"{view}-{size}.png"
            window.grab().save(str(path))
            print(path, "cut:", findings(window) or "nothing")
    os._exit(0)  # the window's threads need no orderly end here


if __name__ == "__main__":
    sys.exit(main())
