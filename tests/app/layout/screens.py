"""A window script run on an offscreen screen of a given size: what the layout tests share.

``on_screen("tests.app.layout.tour", [runs], 1920, 1080, "1.5")`` runs ``python -m MODULE ARGS`` with Qt's offscreen
platform given that one screen and that scale factor, and returns the JSON object its last line printed. The screen
file goes to an ASCII temp folder: Qt reads the configfile path as Latin-1, and under ``.ci/plain-check``'s
"Jürgen Müller" it found no file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import REPO

LAPTOPS = [(1920, 1080, "1.5"), (1366, 768, "1")]  # 1920x1080 at 150 % (1280x720 logical), and 1366x768


def on_screen(module: str, args: list[str], width: int, height: int, scale: str, timeout: float = 240) -> dict:
    """``python -m module args`` on that screen; its last line's JSON (the test fails with its stderr if it failed).
    The JSON's ``screen`` must be the screen's logical size: a script that ran on another screen measured nothing."""
    with tempfile.TemporaryDirectory(prefix="rlpanel-screen-") as folder:
        screen = Path(folder) / "screen.json"
        screen.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": width, "height": height,
                                                   "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}), encoding="utf-8")
        env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screen}", "QT_SCALE_FACTOR": scale}
        done = subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=timeout)
    quiet = "\n".join(line for line in done.stderr.splitlines() if "This plugin does not support" not in line)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-1000:]}\n{quiet[-3000:]}"
    data = json.loads(done.stdout.strip().splitlines()[-1])
    if "screen" in data:
        assert data["screen"] == [round(width / float(scale)), round(height / float(scale))], data["screen"]
    return data
