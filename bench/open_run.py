"""Opening a long run, side by side: main's code (a copy) against this tree's, cold and from the run's cache.

Writes one run of ``BENCH_HOURS`` (``bench.gui_scale.write_run``), then for ``BENCH_ROUNDS`` rounds opens
it in a fresh window process three ways, interleaved: the code at ``--baseline`` (a copy of main:
``git archive main | tar -x -C /tmp/open-main``), this tree with the run's cache removed (the first
open: parsed, the cache written), and this tree again (from the cache). Each open is timed from
``follow_run`` to the whole history in the plots, with its CPU time and the process's RSS after it.

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


def child(run: Path, episodes: int) -> None:
    """Open ``run`` in a MainWindow of the code on sys.path; print one JSON line."""
    import gc

    import psutil
    from PySide6.QtCore import QSettings
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
    app.processEvents()
    wall, cpu = time.perf_counter(), time.process_time()
    window.follow_run(run)
    while (reward.buffer("episode").size < episodes or not temperature.has_series("gpu0")
           or float(temperature.buffer("gpu0").times[-1]) < last_t or monitor.loading):
        app.processEvents()
        time.sleep(0.001)
    monitor.redraw()
    monitor.grab()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    gc.collect()
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "rss_mb": psutil.Process().memory_info().rss / 2**20,
                      "points": temperature.buffer("gpu0").size}), flush=True)
    window.close()


def open_once(code: Path, run: Path, episodes: int, home: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "RLPANEL_HOME": home, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, str(HERE / "bench" / "open_run.py"), "--child", str(run), str(episodes)],
                         cwd=code, env=env, capture_output=True, text=True, timeout=600, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, help="a copy of main's code to compare with")
    parser.add_argument("--child", nargs=2)
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
        ways = {"cold": HERE, "cached": HERE}
        if args.baseline:
            ways = {"main": args.baseline, **ways}
        got: dict[str, list[dict]] = {way: [] for way in ways}
        for _ in range(rounds):
            for way, code in ways.items():
                if way != "cached":
                    shutil.rmtree(run / "cache", ignore_errors=True)
                got[way].append(open_once(code, run, EPISODES, home))
        for way, results in got.items():
            wall = [r["wall_s"] for r in results]
            cpu, rss = statistics.median(r["cpu_s"] for r in results), statistics.median(r["rss_mb"] for r in results)
            print(f"{way:>7}: open {statistics.median(wall):.2f} s (runs {min(wall):.2f}-{max(wall):.2f}), CPU "
                  f"{cpu:.2f} s, RSS {rss:.0f} MB, "
                  f"points per GPU series {results[-1]['points']:,}")
        if args.baseline:
            for way in ("cold", "cached"):
                ratios = [m["wall_s"] / r["wall_s"] for m, r in zip(got["main"], got[way], strict=True)]
                print(f"main / {way}: median of the rounds' ratios {statistics.median(ratios):.2f}x "
                      f"({min(ratios):.2f}-{max(ratios):.2f})   (goal: open <= 1 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
