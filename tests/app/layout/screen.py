"""Run a layout script (``python -m tests.app.layout.tour`` and its kind) on an offscreen screen of a given size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import REPO


def run_on_screen(module: str, args: list[str], width: int, height: int, scale: str,
                  timeout: float = 240) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGS`` on a screen of ``width`` x ``height`` pixels at ``scale`` (1920x1080 at "1.5" is
    1280x720 logical), from the repository (or the copy of tests/ .ci/plain-check runs in)."""
    # Qt reads the platform's configfile path as Latin-1: under .ci/plain-check's "Jürgen Müller" it found no file
    with tempfile.TemporaryDirectory(prefix="rlpanel-screen-") as folder:
        screen = Path(folder) / "screen.json"
        screen.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": width, "height": height,
                                                   "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}), encoding="utf-8")
        env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screen}", "QT_SCALE_FACTOR": scale}
        return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=timeout)


def last_json(done: subprocess.CompletedProcess) -> dict:
    """The JSON object a layout script prints on its last line, once it ended well."""
    quiet = "\n".join(line for line in done.stderr.splitlines() if "This plugin does not support" not in line)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-1000:]}\n{quiet[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])
