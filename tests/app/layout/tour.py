"""Open the real window on a screen of a given size, visit every tab and dialog in the states a user sees
(a run live, runs ticked in Results, the Presets panel open and closed), and print what each cuts.

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json QT_SCALE_FACTOR=1.5 python -m tests.app.layout.tour RUNS [SHOTS]

prints one JSON object ``{"screen": [w, h], "window": [w, h], "views": {view: [finding, ...]}}``; with SHOTS,
a PNG of each view is saved there (the README's tour is taken this way, under Xvfb). RLPANEL_HOME should
point at a scratch folder: the window's settings and the fake runs go there.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtWidgets import QApplication, QWidget

from tests.app.layout.clipping import findings


def make_runs(runs_dir: Path) -> Path:
    """Three ended runs and a baseline with curves, and one running run (this process is its worker): rewards
    that rise with noise, PPO's nine scalars, where its time goes (cycle records), ten minutes of GPU and host
    readings."""
    from core.util.files import write_json_atomic
    from tests.app.fake_runs import append_jsonl, make_fake_run

    now, noise = time.time(), np.random.default_rng(0)
    for name, reward in (("ppo-long-night-cartpole-with-a-long-name", 1.0), ("a2c-short", 0.5), ("ppo-seed-2", 0.8)):
        run = make_fake_run(runs_dir, state="finished", name=name, ended_at=now - 60, steps=10000, device="cpu",
                            best_mean_reward=400 * reward)
        status = json.loads((run / "status.json").read_text())
        write_json_atomic(run / "status.json", {**status, "started_at": now - 660})  # ten minutes of training
        append_jsonl(run / "metrics.jsonl", [
            {"kind": "episode", "step": 40 * i, "t": now - 660 + 2 * i, "reward": _reward(i, reward, noise),
             "length": 20 + i // 5} for i in range(250)])
    live = make_fake_run(runs_dir, state="running", name="night-ppo-live-run-with-a-long-name", device="cpu")
    steps = [256 * i for i in range(1, 160)]
    append_jsonl(live / "metrics.jsonl",
                 [{"kind": "episode", "step": 160 * i, "t": now - 600 + 2.4 * i, "reward": _reward(i, 1.2, noise),
                   "length": 20} for i in range(250)]
                 + [{"kind": "progress", "step": step, "t": now - 600 + 15 * i, "fps": 950.0 + 40 * noise.standard_normal(),
                     "total": 100000} for i, step in enumerate(steps[::4])]
                 + [{"kind": "train", "step": step, "t": now - 600 + 3.75 * i, "train/learning_rate": 3e-4,
                     "train/loss": 0.5 * math.exp(-i / 60) + 0.05 * noise.random(),
                     "train/entropy_loss": -0.69 + i / 800, "train/clip_fraction": 0.1 + 0.05 * noise.random(),
                     "train/value_loss": 2 * math.exp(-i / 50) + 0.1 * noise.random(),
                     "train/policy_gradient_loss": -0.01 * noise.random(), "train/approx_kl": 0.01 * noise.random(),
                     "train/explained_variance": 1 - math.exp(-i / 40), "train/clip_range": 0.2}
                    for i, step in enumerate(steps)]
                 # where its time goes: the collect/train bar and its advice show above the charts
                 + [{"kind": "cycle", "step": step, "t": now - 600 + 3.75 * i, "n": 1, "collect_s": 2.6, "train_s": 1.0,
                     "other_s": 0.15} for i, step in enumerate(steps)])
    append_jsonl(live / "telemetry.jsonl", [
        {"t": now - 600 + 2 * i, "gpu": 0, "memory_used_bytes": int((2.1 + 0.05 * noise.random()) * 2**30),
         "memory_total_bytes": 8 * 2**30, "temperature_c": 55 + i // 20, "utilization_pct": 40 + 20 * noise.random(),
         "power_w": 35 + 10 * noise.random(), "process_memory_bytes": 2**30, "rss_bytes": int(0.6 * 2**30),
         "process_cpu_pct": 90 + 15 * noise.random()} for i in range(300)])
    return live


def _reward(i: int, scale: float, noise: np.random.Generator) -> float:
    return float(scale * (200 * (1 - math.exp(-i / 120)) + 25 * noise.standard_normal()))


def settle(app: QApplication, seconds: float = 0.4) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def open_settled(runs_dir: Path):
    """The real window on ``runs_dir``, shown, once the steps after its first frame (the forms below the fold among
    them) and Configure's verdict are done; returns (app, window)."""
    from app.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    window = MainWindow(runs_dir, confirm_close=False, tray=False)
    window.show()
    deadline = time.monotonic() + 120
    while not (window.started() and window.configure.model.settled()) and time.monotonic() < deadline:
        settle(app, 0.05)
    return app, window


def tour(runs_dir: Path, shots: Path | None) -> dict:
    from app.configure.preset_diff import PresetDiffDialog

    live = make_runs(runs_dir)
    app, window = open_settled(runs_dir)
    views: dict[str, list[str]] = {}

    def look(view: str, top: QWidget, prepare: Callable[[], object] = lambda: None) -> None:
        prepare()
        settle(app)
        views[view] = findings(top)
        for wait in (1.0, 2.0):  # a busy machine may not have laid out a label yet: a real cut is still there later
            if not views[view]:
                break
            settle(app, wait)
            views[view] = findings(top)
        if shots:
            top.grab().save(str(shots / f"{view}.png"))

    def tab(name: str) -> Callable[[], None]:
        return lambda: window.tabs.setCurrentIndex([window.tabs.tabText(i) for i in range(window.tabs.count())].index(name))

    window.follow_run(None)  # the window re-attached to the live run: back to the idle GPU monitor first
    settle(app, 1.0)
    look("monitor-idle", window)  # no run followed: the live GPU monitor, or why it has no data
    window.open_run(live)
    settle(app, 1.5)
    look("monitor", window)
    for name in ("Runs", "Results", "Queue", "Sweeps", "Log", "System"):
        look(name.lower(), window, tab(name))
    look("results-ticked", window, lambda: (tab("Results")(), window.results.set_checked(window.results.shown_ids())))
    look("configure-presets", window, lambda: (tab("Monitor")(), window.configure.presets_toggle.setChecked(True)))
    window.configure.presets_toggle.setChecked(False)
    window.configure.select_preset("laptop-8gb")
    look("configure-laptop-preset", window)
    window.configure.select_preset("fast")
    settle(app, 0.5)
    if window.configure.model.tunable_config() is None:  # Tune would say so in a message box that blocks
        raise SystemExit(f"the 'fast' preset does not validate: {window.configure.errors()}")
    dialogs = (("tune", lambda: window.configure.open_tune()), ("morning-report", window.results.show_morning_report),
               ("notifications", lambda: window.notifier.open_settings()),
               ("diff", lambda: _shown(PresetDiffDialog("laptop-8gb", window))))
    for name, open_dialog in dialogs:
        dialog = open_dialog()
        if dialog is None:
            views[name] = [f"the {name} dialog did not open"]
            continue
        look(name, dialog)
        dialog.close()
    avail = window.screen().availableGeometry()
    return {"screen": [avail.width(), avail.height()], "window": [window.width(), window.height()], "views": views}


def _shown(dialog: QWidget) -> QWidget:
    dialog.show()
    return dialog


def main() -> None:
    runs_dir = Path(sys.argv[1])
    shots = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    print(json.dumps(tour(runs_dir, shots)), flush=True)
    os._exit(0)  # the findings are out; the window's threads need no orderly end here


if __name__ == "__main__":
    main()
