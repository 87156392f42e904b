"""The tray icon on a real X server with a real tray host (Xvfb + trayer), in a child process.

The offscreen platform the other GUI tests use has no tray, so there ``TrayIcon`` only ever takes its
fallback (the Log tab). Here Qt's xcb platform docks a real ``QSystemTrayIcon`` into trayer's tray
(the freedesktop XEmbed protocol, as on a Linux desktop) and ``showMessage`` opens Qt's balloon (no
notification daemon runs: Windows shows the same call as a toast). Skipped, saying why, where Xvfb
or trayer is not installed (``apt-get install xvfb trayer``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

SCRIPT = r"""
import json, sys, time
from PySide6.QtWidgets import QApplication, QSystemTrayIcon
from app.notify.tray import TrayIcon

app = QApplication([])
deadline = time.monotonic() + 30
while not QSystemTrayIcon.isSystemTrayAvailable() and time.monotonic() < deadline:
    app.processEvents(); time.sleep(0.1)   # trayer takes the tray selection once its window is up (slower on a busy machine)
tray = TrayIcon()
deadline = time.monotonic() + 20
while tray.icon is not None and tray.icon.geometry().isEmpty() and time.monotonic() < deadline:
    app.processEvents(); time.sleep(0.05)   # docking into the tray host takes a moment
tray.set_status(["run-a", "run-b"], "run-a: running, 4,000 of 10,000 steps (40 %)")
before = {id(w) for w in app.topLevelWidgets()}
tray.notify("rlpanel: run run-b finished", "Final reward 200.0")
end = time.monotonic() + 3
while time.monotonic() < end:
    app.processEvents(); time.sleep(0.05)
balloons = [type(w).__name__ + ":" + w.metaObject().className() for w in app.topLevelWidgets()
            if id(w) not in before and w.isVisible()]
geometry = tray.icon.geometry() if tray.icon is not None else None
print(json.dumps({"available": QSystemTrayIcon.isSystemTrayAvailable(), "icon": tray.icon is not None,
                  "geometry": [geometry.width(), geometry.height()] if geometry is not None else None,
                  "tooltip": tray.icon.toolTip() if tray.icon is not None else None,
                  "stop_menu": [a.text() for a in tray.stop_menu.actions()], "balloons": balloons}))
tray.close()
"""


@pytest.mark.gui
@pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("trayer")),
                    reason="needs Xvfb and trayer (apt-get install xvfb trayer) for a real X server with a system tray")
def test_a_real_tray_host_shows_the_icon_its_tooltip_menu_and_a_notification(tmp_path):
    read_end, write_end = os.pipe()  # Xvfb picks a free display itself and writes its number here
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_end,))
    os.close(write_end)
    tray_host = None
    try:
        with os.fdopen(read_end) as numbers:
            display = f":{numbers.readline().strip()}"
        assert display != ":", "Xvfb did not start"
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "RLPANEL_HOME": str(tmp_path)}
        tray_host = subprocess.Popen(["trayer", "--edge", "top", "--align", "right", "--widthtype", "pixel",
                                      "--width", "100", "--height", "28"], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=120)
    finally:
        for proc in (tray_host, xvfb):
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["available"] and seen["icon"]  # a real icon, not the Log tab's fallback
    assert seen["geometry"][0] > 0 and seen["geometry"][1] > 0  # docked into the tray host
    assert seen["tooltip"].startswith("rlpanel: 2 runs going") and "40 %" in seen["tooltip"]
    assert seen["stop_menu"] == ["run-a", "run-b"]
    # Qt's balloon (QBalloonTip) is what showMessage opens on X11 without a notification daemon
    assert any(name.endswith(":QBalloonTip") for name in seen["balloons"]), f"no notification opened: {seen['balloons']}"
