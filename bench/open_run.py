"""Opening a long run, side by side: main's code (a copy) against this tree's, a first open and again.

Writes one run of ``BENCH_HOURS`` (``bench.gui_scale.write_run``), then for ``BENCH_ROUNDS`` rounds opens
it in a fresh window process, interleaved: the code at ``--baseline`` (a copy of main:
``git archive main | tar -x -C /tmp/open-main``, ``main first`` / ``main again``) and this tree, each on the run
as its worker leaves it (``first``: the cache the worker's ``core.run.cache.writer`` wrote, made here by this
tree's code, timed apart), then again (``again``: the cache as that code's first open left it).
``--cold`` adds this tree on a run without any cache (a run of an older version: parsed, then cached).
Each open is timed from ``follow_run`` to the whole history painted in the plots (``child``), with its CPU time,
the process's RSS after it and the plots' paints.

    QT_QPA_PLATFORM=offscreen BENCH_HOURS=24 python bench/open_run.py --baseline /tmp/open-main
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


SETTLE_S = 1.0  # the window's own start (runs list, GPU probe) is over before the run is opened, as when a user clicks it
QUIET_S = 0.15  # the history is on screen once its plots have been painted and no plot paints for this long


def child(run: Path, episodes: int) -> None:
    """Open ``run`` in a MainWindow of the code on sys.path; print one JSON line.

    Timed from ``follow_run`` to the end of the last paint of a plot once the whole history is in them (the window
    on the offscreen platform paints as on a screen). ``BENCH_GRAB=1``: to a redraw and a ``grab()`` of the Monitor
    instead (the measure before 2026-11-27: a second rendering of every plot on top of the window's own).
    """
    import gc

    import psutil
    from PySide6.QtCore import QEvent, QObject, QSettings
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from core.run.layout import RunDir
    from core.util.jsonl import tail_jsonl

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, os.environ["RLPANEL_HOME"])
    app = QApplication([])
    window = MainWindow(run.parent, confirm_close=False)
    window.resize(1600, 1000)
    window.show()
    monitor = window.monitor
    window.tabs.setCurrentWidget(monitor)
    reward, temperature = monitor.reward_plot, monitor.gpu.plots["temperature_c"]
    last_t = float(tail_jsonl(RunDir(run).telemetry, 4096)[-1]["t"])
    settled = time.perf_counter() + SETTLE_S
    while time.perf_counter() < settled:
        app.processEvents()
        time.sleep(0.005)

    class Paints(QObject):
        """Counts the paints of the plots' viewports (scalar charts made during the open included)."""

        count = 0

        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            if event.type() == QEvent.Type.Paint and type(obj.parent()).__name__.endswith("Plot"):
                Paints.count += 1
            return False

    paints = Paints()
    app.installEventFilter(paints)
    wall, cpu = time.perf_counter(), time.process_time()
    window.follow_run(run)
    while (reward.buffer("episode").size < episodes or not temperature.has_series("gpu0")
           or float(temperature.buffer("gpu0").times[-1]) < last_t or monitor.loading):
        app.processEvents()
        time.sleep(0.001)
    if os.environ.get("BENCH_GRAB"):
        monitor.redraw()
        monitor.grab()
        done = (time.perf_counter(), time.process_time())
    else:
        done, seen, quiet_from = (time.perf_counter(), time.process_time()), Paints.count, time.perf_counter()
        while time.perf_counter() - quiet_from < QUIET_S:
            app.processEvents()
            if Paints.count != seen:
                done, seen, quiet_from = (time.perf_counter(), time.process_time()), Paints.count, time.perf_counter()
            elif getattr(monitor, "held", False):  # its plots are readied to be painted: the quiet starts after that
                quiet_from = time.perf_counter()
            time.sleep(0.001)
    wall, cpu = done[0] - wall, done[1] - cpu
    gc.collect()
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "rss_mb": psutil.Process().memory_info().rss / 2**20,
                      "points": temperature.buffer("gpu0").size, "paints": Paints.count}), flush=True)
    window.close()


def open_once(code: Path, run: Path, episodes: int, home: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "RLPANEL_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, str(HERE / "bench" / "open_run.py"), "--child", str(run), str(episodes)],
                         cwd=code, env=env, capture_output=True, text=True, timeout=600, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def worker_cache(run: Path) -> float:
    """The cache a worker leaves (``core.run.cache.writer``, its final pass); returns its CPU seconds."""
    from core.run.cache.writer import CacheWriter

    cpu = time.process_time()
    CacheWriter(run).update(min_bytes=1)
    return time.process_time() - cpu


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, help="a copy of main's code to compare with")
    parser.add_argument("--child", nargs=2)
    parser.add_argument("--cold", action="store_true", help="also this tree on a run without a cache")
    parser.add_argument("--first-only", action="store_true", help="the first opens only (a 48 h run: half the time)")
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), int(args.child[1]))
        return 0
    sys.path.insert(0, str(HERE))
    from bench.gui_scale import EPISODES, HOURS, write_run

    rounds = int(os.environ.get("BENCH_ROUNDS", 3))
    with tempfile.TemporaryDirectory() as home:
        os.environ["RLPANEL_HOME"] = home
        run = write_run(Path(home) / "runs")
        size_mb = sum(p.stat().st_size for p in run.iterdir() if p.is_file()) / 2**20
        print(f"a {HOURS:g} h run ({size_mb:.0f} MB of JSONL), {rounds} rounds", flush=True)
        # way -> (code, cache): "worker" = the cache the worker leaves; "left" = as the way before left it; None: none
        ways: dict[str, tuple[Path, str | None]] = {}
        if args.cold:
            ways["cold"] = (HERE, None)
        for name, code in ((("main ", args.baseline),) if args.baseline else ()) + (("", HERE),):
            ways[f"{name}first"] = (code, "worker")
            if not args.first_only:
                ways[f"{name}again"] = (code, "left")
        got: dict[str, list[dict]] = {way: [] for way in ways}
        writes: list[float] = []
        for _ in range(rounds):
            for way, (code, cache) in ways.items():
                if cache != "left":
                    shutil.rmtree(run / "cache", ignore_errors=True)
                if cache == "worker":
                    writes.append(worker_cache(run))
                got[way].append(open_once(code, run, EPISODES, home))
        print(f"the worker's cache of the whole run, written at once here: {statistics.median(writes):.1f} s of CPU "
              f"({statistics.median(writes) / (HOURS * 36):.3f} % of the run's {HOURS:g} h; the worker spreads it over them)")
        for way, results in got.items():
            wall = [r["wall_s"] for r in results]
            cpu, rss = statistics.median(r["cpu_s"] for r in results), statistics.median(r["rss_mb"] for r in results)
            paints = statistics.median(r.get("paints", 0) for r in results)
            print(f"{way:>10}: open {statistics.median(wall):.2f} s (runs {min(wall):.2f}-{max(wall):.2f}), CPU "
                  f"{cpu:.2f} s, RSS {rss:.0f} MB (goal <= 400 MB), points per GPU series {results[-1]['points']:,}, "
                  f"plot paints {paints:.0f}   (goal: open <= 1 s)")
        for way in ways:
            if f"main {way}" in got:
                base = got[f"main {way}"]
                ratios = [m["wall_s"] / r["wall_s"] for m, r in zip(base, got[way], strict=True)]
                cpu_ratios = [m["cpu_s"] / r["cpu_s"] for m, r in zip(base, got[way], strict=True)]
                print(f"main {way} / {way}: median of the rounds' ratios {statistics.median(ratios):.2f}x wall "
                      f"({min(ratios):.2f}-{max(ratios):.2f}), {statistics.median(cpu_ratios):.2f}x CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
