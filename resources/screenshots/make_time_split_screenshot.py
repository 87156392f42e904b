"""``monitor-time-split-WxH.png`` (WxH: the logical screen): the Monitor of a finished real run whose env is slow
(3 ms a step), with the bar of where its time went, the recent and whole-run shares and the advice (issue 31).

Trains the run first (a few hundred steps through the real worker, ~20 s), or shows ``--run DIR``. Prints what
the layout checker finds cut. Under Xvfb::

    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 python resources/screenshots/make_time_split_screenshot.py
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

SLOW_PPO = {"algo": "PPO", "env": {"entry_point": "tests.core.run.fast_env:FastEpisodesEnv",
                                   "kwargs": {"steps": 20, "delay_s": 0.003}},
            "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 4}, "runtime": {"n_envs": 2},
            "budget": {"total_timesteps": 1024, "checkpoint_every": 256}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--run", type=Path, help="a run folder to show instead of training one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        from tests.training_helpers import make_run, run_worker

        run = args.run
        if run is None:
            run = make_run(Path(tmp) / "runs", SLOW_PPO)
            assert run_worker(run) == 0, (run / "worker.log").read_text()
        from PySide6.QtWidgets import QApplication

        from app.main_window import MainWindow
        from tests.app.layout.clipping import findings
        from tests.app.layout.tour import settle

        app = QApplication.instance() or QApplication([])
        window = MainWindow(run.parent, confirm_close=False, tray=False)
        window.show()
        settle(app, 1.0)
        window.open_run(run)
        settle(app, 3.0)
        screen = window.screen().size()
        window.grab().save(str(args.out / f"monitor-time-split-{screen.width()}x{screen.height()}.png"))
        print("split:", window.monitor.time_split.words.text())
        print("advice:", window.monitor.time_split.advice.text())
        print("cut:", findings(window) or "nothing")
    os._exit(0)  # the window's threads need no orderly end here


if __name__ == "__main__":
    sys.exit(main())
