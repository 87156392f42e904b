"""Open the real window on a screen of a given size, visit every tab and dialog in the states a user sees
(a run live, runs ticked in Results, the Presets panel open and closed), and print what each cuts.

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json QT_SCALE_FACTOR=1.5 python -m tests.app.layout.tour RUNS [SHOTS]

prints one JSON object ``{"screen": [w, h], "window": [w, h], "views": {view: [finding, ...]}}``; with SHOTS,
a PNG of each view is saved there (the README's tour is taken this way, under Xvfb). RLPANEL_HOME should
point at a scratch folder: the window's settings and the fake runs go there.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QApplication, QWidget

from tests.app.layout.clipping import findings


def make_runs(runs_dir: Path) -> Path:
    """Three ended runs and a baseline with curves, and one running run (this process is its worker)."""
    from core.util.files import write_json_atomic
    from tests.app.fake_runs import append_jsonl, gpu_lines, make_fake_run

    now = time.time()
    for name, reward in (("ppo-long-night-cartpole-with-a-long-name", 1.0), ("a2c-short", 0.5), ("ppo-seed-2", 0.8)):
        run = make_fake_run(runs_dir, state="finished", name=name, ended_at=now - 60, steps=10000, device="cpu",
                            best_mean_reward=400 * reward)
        status = json.loads((run / "status.json").read_text())
        write_json_atomic(run / "status.json", {**status, "started_at": now - 660})  # ten minutes of training
        append_jsonl(run / "metrics.jsonl", [
            {"kind": "episode", "step": 200 * i, "t": now - 600 + i, "reward": reward * i * 4, "length": 20 + i}
            for i in range(50)])
    live = make_fake_run(runs_dir, state="running", name="night-ppo-live-run-with-a-long-name", device="cpu")
    append_jsonl(live / "metrics.jsonl", [
        {"kind": "episode", "step": 200 * i, "t": now - 100 + i, "reward": float(i), "length": 20} for i in range(40)]
        + [{"kind": "progress", "step": 8000, "t": now, "fps": 950.0, "total": 100000},
           {"kind": "train", "step": 8000, "t": now, "train/learning_rate": 3e-4, "train/loss": 0.12,
            "train/entropy_loss": -0.6, "train/clip_fraction": 0.1}])
    append_jsonl(live / "telemetry.jsonl", gpu_lines(30, t0=now - 6))
    return live


def settle(app: QApplication, seconds: float = 0.4) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def tour(runs_dir: Path, shots: Path | None) -> dict:
    from app.configure.preset_diff import PresetDiffDialog
    from app.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    live = make_runs(runs_dir)
    window = MainWindow(runs_dir, confirm_close=False, tray=False)
    window.show()
    deadline = time.monotonic() + 120
    while not window.configure.model.settled() and time.monotonic() < deadline:
        settle(app, 0.05)
    views: dict[str, list[str]] = {}

    def look(view: str, top: QWidget, prepare: Callable[[], object] = lambda: None) -> None:
        prepare()
        settle(app)
        views[view] = findings(top)
        if shots:
            top.grab().save(str(shots / f"{view}.png"))

    def tab(name: str) -> Callable[[], None]:
        return lambda: window.tabs.setCurrentIndex([window.tabs.tabText(i) for i in range(window.tabs.count())].index(name))

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
