"""Time from process start to the main window's first frame (``python -m app``) beside a bare PySide6 window.

Each arm is a child process started from scratch; the arms take turns (bare, app, bare, app, ...) so a busy
machine slows them alike, and each line gives the median and the spread of its starts, the median of the
app/bare ratios of each round, and the child's CPU time (``getrusage(RUSAGE_CHILDREN)``: the whole process, its
start, the ``--quit-ms`` it stays up and its exit; and, where the arm writes it, its CPU time to the first frame).
The app writes the time of its first painted frame (and its CPU time then) to ``RLPANEL_SHOWN_FILE`` and quits by
itself (``RLPANEL_QUIT_AFTER_MS``); the bare window, a QMainWindow with a label, does the same. (main before issue 29
wrote its time before the first paint, a little early, and no CPU time.) The app also writes when the steps after
its first frame are done (``MainWindow.started()``: the Monitor and its plots, the forms below the fold, the
follower), and with ``RLPANEL_QUIT_WHEN_STARTED`` quits ``--quit-ms`` after that instead of after the first frame:
its line gives that time too ("started"; a copy that does not write it quits after its first frame as before).
``--other DIR`` adds an arm with another copy of the repository (e.g. main's, from
``git archive main | tar -x -C DIR``), started from DIR, and a line of this copy's times over that one's (the median of
each round's ratio: wall and CPU to the first frame, and the time to started()). Every arm runs
with Python's compiled modules cached (``PYTHONPYCACHEPREFIX`` in the bench's folder, filled by a first start that
is not counted), as an installed copy would: with ``PYTHONDONTWRITEBYTECODE`` set each start compiles every module of
the repository again.
Goal: the app's median <= 0.6 s.

    python bench/startup.py [--rounds 7] [--other /tmp/startup-main]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOAL_S = 0.6

# The same protocol as the app (app.main.run_app): the time of the first painted frame, then quit.
BARE = """
import os, sys, time
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

class Window(QMainWindow):
    painted = False

    def paintEvent(self, event):
        super().paintEvent(event)
        if not self.painted:
            self.painted = True
            QTimer.singleShot(0, lambda: Path(os.environ["RLPANEL_SHOWN_FILE"]).write_text(
                f"{time.time()!r} {time.process_time()!r}"))

app = QApplication(sys.argv[:1])
window = Window()
window.setWindowTitle("bare")
window.setCentralWidget(QLabel("a bare PySide6 window"))
window.resize(1280, 720)
window.show()
QTimer.singleShot(int(os.environ["RLPANEL_QUIT_AFTER_MS"]), app.quit)
sys.exit(app.exec())
"""


@dataclass
class Arm:
    name: str
    command: list[str]
    cwd: Path
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    frame_cpus: list[float] = field(default_factory=list)  # CPU to the first frame, where the arm writes it
    started: list[float] = field(default_factory=list)  # seconds to started() (the steps after the first frame)
    started_cpus: list[float] = field(default_factory=list)  # and the CPU seconds then, where the arm writes them


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_start(arm: Arm, home: Path, quit_ms: int) -> tuple[float, float, float | None]:
    """Seconds from the start to the first frame, the child's CPU seconds, and its CPU seconds to the first frame
    (None from a copy that writes only the time: main before issue 29). The seconds to ``started()`` and the CPU
    seconds then go to ``arm`` where the copy writes them."""
    shown = home / "shown"
    shown.unlink(missing_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"), "RLPANEL_HOME": str(home),
           "RLPANEL_QUIT_AFTER_MS": str(quit_ms), "RLPANEL_SHOWN_FILE": str(shown), "RLPANEL_QUIT_WHEN_STARTED": "1",
           "XDG_CONFIG_HOME": str(home / "config")}  # the user's saved window state is not touched
    env.pop("PYTHONPATH", None)  # each arm imports its own copy: the one in its folder
    # compiled once, as an installed copy is (pip writes .pyc files), into the bench's folder, not the repository's
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(home / "pycache")
    cpu = children_cpu()
    start = time.time()
    out = subprocess.run(arm.command, cwd=arm.cwd, env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or not shown.exists():
        raise SystemExit(f"{arm.name} failed (exit {out.returncode}):\n{out.stderr}")
    lines = shown.read_text().split()
    if len(lines) >= 4:
        arm.started.append(float(lines[2]) - start)
        arm.started_cpus.append(float(lines[3]))
    return float(lines[0]) - start, children_cpu() - cpu, float(lines[1]) if len(lines) > 1 else None


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def report(arms: list[Arm]) -> None:
    bare = arms[0]
    for arm in arms:
        ratio = "" if arm is bare else \
            f"   x{statistics.median(a / b for a, b in zip(arm.walls, bare.walls, strict=True)):.1f} bare (median of ratios)"
        frame = f"   CPU to the first frame {statistics.median(arm.frame_cpus):.2f} s ({spread(arm.frame_cpus)})" \
            if arm.frame_cpus else "   (CPU to the first frame: not written)"
        print(f"{arm.name:<12} median {statistics.median(arm.walls):.2f} s ({spread(arm.walls)}){ratio}   "
              f"CPU {statistics.median(arm.cpus):.2f} s ({spread(arm.cpus)}){frame}")
        if arm.started:
            print(f"{'':<12} to started() (the steps after the first frame done) median {statistics.median(arm.started):.2f} s "
                  f"({spread(arm.started)}), CPU then {statistics.median(arm.started_cpus):.2f} s ({spread(arm.started_cpus)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quit-ms", type=int, default=300, help="how long each window stays up after it is shown")
    parser.add_argument("--other", type=Path, help="a second copy of the repository: an arm of its own (e.g. main's)")
    args = parser.parse_args()
    arms = [Arm("bare Qt", [sys.executable, "-c", BARE], REPO), Arm("app", [sys.executable, "-m", "app"], REPO)]
    if args.other:
        arms.append(Arm(f"app at {args.other.name}", [sys.executable, "-m", "app"], args.other.resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        for arm in arms:
            one_start(arm, Path(tmp), args.quit_ms)  # warm the file cache, as a user's second start would be
            del arm.started[:], arm.started_cpus[:]  # not counted (it wrote its started() too)
        for _ in range(args.rounds):
            for arm in arms:  # interleaved: a busy moment slows every arm of its round
                wall, cpu, frame_cpu = one_start(arm, Path(tmp), args.quit_ms)
                arm.walls.append(wall)
                arm.cpus.append(cpu)
                if frame_cpu is not None:
                    arm.frame_cpus.append(frame_cpu)
    app = arms[1]
    print("start to window shown:", ", ".join(f"{t:.2f} s" for t in app.walls))
    report(arms)
    for other in arms[2:]:  # this copy against the other, round by round: the medians of the ratios
        walls = statistics.median(a / b for a, b in zip(app.walls, other.walls, strict=True))
        cpus = statistics.median(a / b for a, b in zip(app.frame_cpus, other.frame_cpus, strict=True)) \
            if len(app.frame_cpus) == len(other.frame_cpus) == len(app.walls) else None
        late = statistics.median(a / b for a, b in zip(app.started, other.started, strict=True)) \
            if len(app.started) == len(other.started) == len(app.walls) else None
        print(f"app / {other.name}: wall to the first frame x{walls:.2f}"
              + (f", CPU to it x{cpus:.2f}" if cpus is not None else "")
              + (f", to started() x{late:.2f}" if late is not None else "") + " (medians of the rounds' ratios)")
    print(f"median {statistics.median(app.walls):.2f} s   (goal <= {GOAL_S} s)")
    print("torch imported by the GUI: no (app/ never imports it; tests/app/test_startup.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
