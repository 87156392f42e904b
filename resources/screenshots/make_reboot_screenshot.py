"""``queue-survive-reboot-WxH.png`` (WxH: the logical screen): the Queue tab with *Resume after a restart* ticked
beside Start, and a queue whose start-up entry is registered (the header says where).

The queue's state is drawn (two jobs, one running), its start-up entry real: an XDG autostart entry made by
``core.queue.autostart.register`` in a temporary XDG_CONFIG_HOME. Prints what the layout checker
(``tests/app/layout/clipping.py``) finds cut. Under Xvfb::

    DISPLAY=:99 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=1.5 python resources/screenshots/make_reboot_screenshot.py

or on a screen of another size, offscreen (a JSON screen file, as the layout tests do)::

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json python resources/screenshots/make_reboot_screenshot.py
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


def write_queue_state(runs_dir: Path) -> None:
    from core.queue.autostart import register
    from core.queue.plan import parse_plan
    from core.queue.state import new_state, write_queue

    plan = parse_plan({"jobs": [{"name": "ppo-cartpole", "algo": "PPO", "env": "CartPole-v1", "timesteps": 200_000},
                                {"name": "base-CartPole-v1", "algo": "random", "env": "CartPole-v1", "episodes": 100}]})
    state = new_state(plan, str(runs_dir / ".queue" / "plan.yaml"))
    now = time.time()
    state.jobs[0].status, state.jobs[0].run_id, state.jobs[0].started_at = "running", "20260114-231502-ppo-cartpole", now - 2710
    state.launched_at = now  # reads as running while the drawing is made (the start grace: no runner needed)
    state.survive_reboot = register(runs_dir, state.id)
    write_queue(runs_dir, state)


def settle(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).parent)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "xdg")  # never the real ~/.config/autostart
        runs_dir = Path(tmp) / "runs"
        runs_dir.mkdir()
        write_queue_state(runs_dir)
        from PySide6.QtWidgets import QApplication

        from app.main_window import MainWindow
        from core.queue.plan import parse_plan
        from tests.app.layout.clipping import findings

        app = QApplication.instance() or QApplication([])
        window = MainWindow(runs_dir, confirm_close=False, tray=False)
        window.show()
        window.tabs.setCurrentWidget(window.queue)
        window.queue.editor.set_plan(parse_plan({"jobs": [
            {"name": "sac-pendulum", "algo": "SAC", "env": "Pendulum-v1", "timesteps": 50_000},
            {"name": "td3-pendulum", "algo": "TD3", "env": "Pendulum-v1", "timesteps": 50_000, "after": ["sac-pendulum"]}]}))
        window.queue.survive_reboot.setChecked(True)
        window.queue.refresh()
        settle(app, 1.5)
        screen = window.screen().size()  # the logical screen: 1280x720 is 1920x1080 at 150 %
        path = args.out / f"queue-survive-reboot-{screen.width()}x{screen.height()}.png"
        window.grab().save(str(path))
        print(path, "cut:", findings(window) or "nothing")
    os._exit(0)  # the window's threads need no orderly end here


if __name__ == "__main__":
    sys.exit(main())
