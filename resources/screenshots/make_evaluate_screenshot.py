"""``evaluate-dialog.png``: the Runs tab's Evaluate... dialog showing a real evaluation's result.

Trains a small PPO run on CartPole (or takes a run folder), opens the dialog on it, presses Evaluate
and saves the dialog once the result is shown. Under Xvfb (a real X server)::

    Xvfb :99 -screen 0 1920x1080x24 &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 \
        python resources/screenshots/make_evaluate_screenshot.py [RUN_DIR] [-o OUT_DIR]
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


def train(folder: Path) -> Path:
    from tests.training_helpers import make_run, run_worker

    run = make_run(folder, {"algo": "PPO", "name": "cartpole-demo", "runtime": {"n_envs": 4, "seed": 3},
                            "budget": {"total_timesteps": 16_384, "checkpoint_every": 4096, "keep_checkpoints": 4}})
    assert run_worker(run, timeout=600) == 0, (run / "worker.log").read_text()
    return run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_dir", nargs="?", type=Path)
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).parent)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("RLPANEL_HOME", tmp)
        run = args.run_dir or train(Path(tmp) / "runs")
        from PySide6.QtWidgets import QApplication

        from app.agent.evaluate_dialog import EvaluateDialog

        app = QApplication.instance() or QApplication([])
        dialog = EvaluateDialog(run, "cartpole-demo")
        dialog.episodes.setValue(20)
        dialog.show()
        dialog.start()
        deadline = time.monotonic() + 120
        while dialog.evaluation is None and dialog.error is None and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.05)
        for _ in range(5):
            app.processEvents()
        path = args.out / "evaluate-dialog.png"
        dialog.grab().save(str(path))
        print(path, dialog.error or "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
