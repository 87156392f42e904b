"""The real system-tray icon: its notification when a run ends and its menu, on a desktop with a tray host.

    Xvfb :13 -screen 0 1600x1000x24 &
    DISPLAY=:13 trayer --edge top --align right --widthtype pixel --width 120 --height 28 &
    DISPLAY=:13 QT_QPA_PLATFORM=xcb python resources/screenshots/make_tray_screenshot.py [OUT_DIR]

``trayer`` (Debian's package of that name) is a freedesktop system-tray host: with it Qt's
``QSystemTrayIcon`` is a real tray icon on X11 (XEmbed), its ``showMessage`` Qt's own balloon
(no notification daemon on a bare Xvfb; Windows shows the same call as a toast). Two synthetic runs
(no training): one training, one that finishes while the window watches, so the notification comes
the way it comes at night, from the Runs tab's listing. Writes ``tray-notification.png`` (the
balloon) and ``tray-menu.png`` (the icon's menu with its "Stop a run" submenu open), screenshots of
the whole screen taken with ImageMagick's ``import``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_screenshots import new_run, settle, training, write_lines  # noqa: E402


def running_run(runs: Path, name: str, step: int, total: int) -> Path:
    """A run this script's process stands in for as its worker (so it reads as training)."""
    import numpy as np

    from core.run.status import write_status
    from core.util.procs import process_identity

    run = new_run(runs, name, total=total)
    t0 = time.time() - 1800
    write_lines(run / "metrics.jsonl", [{"kind": "attempt", "t": t0, "attempt": 1}])
    records = training(t0, 1800, 0, np.random.default_rng(3), 0.5, -150.0, 120.0, steps_per_s=step / 1800)
    write_lines(run / "metrics.jsonl", [{**r, "total": total} if r["kind"] == "progress" else r for r in records])
    write_status(run, state="running", started_at=t0, **process_identity())
    return run


def screen(path: Path) -> None:
    subprocess.run(["import", "-window", "root", str(path)], check=True)


def main() -> int:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QSystemTrayIcon

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        runs = Path(tmp) / "runs"
        night = running_run(runs, "sac-night", 412_000, 1_000_000)
        ending = running_run(runs, "ppo-lunar", 1_998_000, 2_000_000)

        from app.main_window import MainWindow
        from app.theme import apply_theme
        from core.run.layout import RunDir
        from core.run.status import write_status
        from core.run.summary import summarize
        from core.util.files import write_json_atomic

        app = QApplication([])
        apply_theme(app)
        if not QSystemTrayIcon.isSystemTrayAvailable():
            print("this display has no system tray: start a tray host first (trayer, see the docstring)")
            return 1
        window = MainWindow(runs, confirm_close=False)
        window.resize(1300, 820)
        window.move(20, 40)
        window.show()
        window.follow_run(night)
        settle(app, 3.0)
        tray = window.notifier.tray
        assert tray.icon is not None
        where = tray.icon.geometry()
        tray.menu.popup(where.bottomLeft())
        settle(app, 0.5)
        tray.menu.setActiveAction(tray.stop_menu.menuAction())
        tray.stop_menu.popup(tray.menu.mapToGlobal(tray.menu.actionGeometry(tray.stop_menu.menuAction()).topLeft()))
        settle(app, 1.0)
        screen(out_dir / "tray-menu.png")
        tray.stop_menu.hide()
        tray.menu.hide()
        settle(app, 0.5)
        write_json_atomic(RunDir(ending).summary, {**summarize(ending), "exit_reason": "reached 2,000,000 timesteps"})
        write_status(ending, state="finished", ended_at=time.time(), exit_reason="reached 2,000,000 timesteps")
        window.runs.refresh()
        deadline = time.monotonic() + 30
        while not window.notifier.shown and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.02)
        if not window.notifier.shown:
            print("no notification came from the listing")
            return 1
        settle(app, 1.5)
        screen(out_dir / "tray-notification.png")

        print(f"tray icon at {where.x()},{where.y()} {where.width()}x{where.height()}; notification: "
              f"{window.notifier.shown[-1][0]}")
        window.close()
    print("wrote tray-notification.png, tray-menu.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
