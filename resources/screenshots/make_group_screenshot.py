"""The Results tab with curves across seeds, from synthetic run folders (no training): run it under a display.

    Xvfb :99 -screen 0 1920x1080x24 &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 python resources/screenshots/make_group_screenshot.py [OUT_DIR]

``results-groups.png``: two launch groups of 5 seeds each (PPO on LunarLander at two learning rates; each
seed learns at its own pace and logs at its own step spacing) against a random baseline, drawn per group:
the mean over seeds with its 95 % bootstrap band, the seeds thin behind, at 1280x720 logical.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def group_runs(runs: Path) -> dict[str, list[Path]]:
    from core.run.annotations import Annotations, write_annotations
    from core.run.status import write_status
    from tests.results_helpers import make_result_run

    rng = np.random.default_rng(27)
    made: dict[str, list[Path]] = {"baseline": [make_result_run(runs, "random-lander", list(rng.normal(-180, 60, 150)),
                                                                algo="random", env="LunarLander-v3", steps_per_episode=120)]}
    for group, lr, top, pace in (("ppo-lr3e-4", 3e-4, 220.0, 3.0), ("ppo-lr1e-3", 1e-3, 120.0, 6.0)):
        made[group] = []
        for seed in range(5):
            episodes = 600 - 20 * seed
            share = np.linspace(0, 1, episodes)
            level = -200 + (top + rng.normal(0, 25) + 200) * (1 - np.exp(-pace * rng.uniform(0.7, 1.3) * share))
            run = make_result_run(runs, f"{group}-s{seed}", list(level + rng.normal(0, 70, episodes)), algo="PPO",
                                  env="LunarLander-v3", steps_per_episode=400 + 15 * seed,
                                  settings={"ppo.learning_rate": lr, "runtime.seed": seed})
            write_status(run, group={"id": group, "seed": seed, "size": 5, "name": group})
            write_annotations(run, Annotations(f"{group}-s{seed}", ("seeds",), ""))
            made[group].append(run)
    return made


def settle(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main() -> int:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        runs = Path(tmp) / "runs"
        made = group_runs(runs)

        from app.main_window import MainWindow
        from app.theme import apply_theme
        from app.threads.main_thread_gc import MainThreadGc

        app = QApplication([])
        collector = MainThreadGc(app)
        apply_theme(app)
        window = MainWindow(runs, confirm_close=False)
        window.resize(1280, 720)
        window.show()
        results = window.results
        window.tabs.setCurrentWidget(results)
        results.refresh()
        settle(app, 2.0)
        results.set_checked([r.name for g in ("ppo-lr3e-4", "ppo-lr1e-3") for r in made[g]])
        results.set_baseline(made["baseline"][0].name)
        results.curve_mode.set_mode("mean", by="group", show_seeds=True)
        deadline = time.monotonic() + 60
        while (results.loading or results.curve_mode.computing) and time.monotonic() < deadline:
            app.processEvents()
        window.splitter.setSizes([0, 1280])  # the launch form at its narrowest: the Results tab as wide as it gets
        results.splitter.setSizes([0, 1280])  # the runs list folded away (as in results.png): the plot wide
        results.right_split.setSizes([430, 170])
        settle(app, 2.0)
        window.grab().save(str(out_dir / "results-groups.png"))
        window.close()
        collector.stop()
    print("wrote", out_dir / "results-groups.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
