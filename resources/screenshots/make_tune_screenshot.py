"""``tune.png``: the Tune dialog with a finished table.

A real tune through the window (``--live``): the main window opens, the Configure tab's forms get
the ``--set`` values, Tune... opens the dialog, its budget is set and Start pressed; when the tune
ends the dialog is saved as ``tune.png`` and stays up ``--hold`` seconds, so the screen can be
taken too. Under Xvfb (a real X server, what a user's desktop gives)::

    Xvfb :98 -screen 0 1600x1000x24 &
    DISPLAY=:98 QT_QPA_PLATFORM=xcb python resources/screenshots/make_tune_screenshot.py --live \\
        --budget 120 --set runtime.device=cuda --set "target_gpu=RTX 4060 Laptop" [--hold 60] [OUT_DIR]
    DISPLAY=:98 import -window root shot.png     # while it holds

Or from a saved ``rlpanel tune --json`` output, shown by the dialog's own slots as a live tune shows them::

    rlpanel tune --algo PPO --env CartPole-v1 --budget-s 240 --json > tune.json
    QT_QPA_PLATFORM=offscreen python resources/screenshots/make_tune_screenshot.py tune.json [OUT_DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

SIZE = (1450, 640)


def from_json(source: Path, out_dir: Path) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.configure.tune_dialog import TuneDialog
    from core.config.validate import validate_config
    from core.throughput.table import TuneResult, TuneRow

    data = json.loads(source.read_text(encoding="utf-8"))
    app = QApplication.instance() or QApplication([])
    rows = [TuneRow(r["settings"], r["fits"], r["steps_per_s"], r["host_bytes"], r["gpu_bytes"],
                    r.get("changes_learning", []), r.get("note", "")) for r in data["table"]]
    pick = next((i for i, r in enumerate(rows) if r.settings == data["pick"]), None)
    result = TuneResult(rows, pick, data.get("preset"), data.get("stopped", "done"), data.get("baseline"),
                        data.get("machine", ""))
    first = rows[0].settings
    cfg = validate_config({"algo": data.get("algo", "PPO"), "env": {"id": data.get("env", "CartPole-v1")},
                           "runtime": {"n_envs": first["runtime.n_envs"]}}).config
    dialog = TuneDialog(cfg)
    dialog.budget.setValue(int(data.get("budget_s", 120)))
    if result.machine:
        dialog.machine_ready.emit(result.machine)
    for i, row in enumerate(rows):
        dialog.row_ready.emit(i, row)
    dialog._finished(result)  # noqa: SLF001 - the slot a finished tune calls
    dialog.resize(*SIZE)
    dialog.show()
    app.processEvents()
    path = out_dir / "tune.png"
    dialog.grab().save(str(path))
    print(path)
    return 0


def live(args: argparse.Namespace, out_dir: Path) -> int:
    """A real tune started from the window's Tune... button."""
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from core.config.validate import parse_set

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        from app.main_window import MainWindow
        from app.theme import apply_theme
        from app.threads.main_thread_gc import MainThreadGc

        app = QApplication([])
        collector = MainThreadGc(app)
        apply_theme(app)
        window = MainWindow(Path(tmp) / "runs", confirm_close=False)
        window.resize(1600, 1000)
        window.show()
        window.tabs.setCurrentWidget(window.configure)
        for item in args.set:
            window.configure.set_field(*parse_set(item))
        settle(app, 3.0)
        QTest.mouseClick(window.configure.tune_button, Qt.MouseButton.LeftButton)
        dialog = window.configure.tune_dialog
        if dialog is None:
            print("Tune... opened no dialog (is the config valid?)")
            return 1
        dialog.budget.setValue(args.budget)
        dialog.resize(*SIZE)
        dialog.move(75, 250)
        QTest.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
        deadline = time.monotonic() + args.budget + 600
        while dialog.running and time.monotonic() < deadline:
            settle(app, 0.5)
        if dialog.running or dialog.error:
            print(f"the tune did not finish: {dialog.error or 'timed out'}")
            return 1
        settle(app, 2.0)
        path = out_dir / "tune.png"
        dialog.grab().save(str(path))
        print(path, flush=True)
        if dialog.result is not None:
            from core.throughput.table import format_table

            print(format_table(dialog.result), flush=True)
        settle(app, args.hold)
        window.close()
        collector.stop()
    return 0


def settle(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", type=Path, help="a saved rlpanel tune --json output (without --live)")
    parser.add_argument("out_dir", nargs="?", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--live", action="store_true", help="run a real tune through the window's Tune... button")
    parser.add_argument("--budget", type=int, default=200, help="the tune's budget in seconds (--live)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help="a form field before Tune... (--live)")
    parser.add_argument("--hold", type=float, default=0.0, help="seconds the finished dialog stays up (--live)")
    args = parser.parse_args()
    if args.live:
        out_dir = args.source if args.source is not None else args.out_dir  # with --live the one path is OUT_DIR
        return live(args, out_dir)
    if args.source is None:
        parser.error("give a saved tune --json output, or --live")
    return from_json(args.source, args.out_dir)


if __name__ == "__main__":
    sys.exit(main())
