"""How the window copes with a 12 h run (``BENCH_HOURS``: another length): load time, redraw time while live, memory, latency.

Writes a run folder holding 12 h of data (216,000 telemetry lines of one GPU, i.e. 216,000
samples in each of 5 GPU series: memory, this run's memory, temperature, utilization, power;
50,000 episodes; progress once a second; train records), opens it in a real MainWindow
(offscreen), and then keeps appending records as a live run would while measuring:

- redraw: ``setData`` of every curve plus rendering the Monitor tab (``grab()``): the worst case; beside it the tab
  rendered once more with nothing new, the floor of such a render;
- a frame as the window draws it: the redraw of what changed (each plot gives its curves only what changed since
  its last frame) and a repaint of each plot that changed, whole (``live_frames``),
- RSS of this GUI process with everything loaded,
- latency from a record appended to metrics.jsonl to it being in the reward plot's curve.

The redraw is timed side by side, in alternating blocks of frames of the same live run, against
the plots drawn the way pyqtgraph does on its own (peak downsampling and clip-to-view over each
whole series on every ``setData``, autoscale to the newest point): the ratio is what rlpanel's
min/max levels and stepped x axis save.

    QT_QPA_PLATFORM=offscreen python bench/gui_scale.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HOURS = float(os.environ.get("BENCH_HOURS", 12))
TELEMETRY_HZ = 5
EPISODES = int(50_000 * HOURS / 12)
# live frames timed, in blocks alternating rlpanel's drawing and pyqtgraph's own (BENCH_FRAMES: a multiple of 80)
FRAMES, BLOCK = int(os.environ.get("BENCH_FRAMES", 240)), 40
FRAME_TIMEOUT_S = 30  # a record that never reaches the plot ends the bench with a message, not a hang


def write_run(root: Path) -> Path:
    from core.config.validate import validate_config
    from core.run.layout import RunDir
    from core.run.status import write_status
    from core.run.store import RunStore
    from core.util.procs import process_identity

    cfg = validate_config({"env": {"id": "CartPole-v1"}, "algo": "PPO", "name": f"bench-{HOURS:g}h",
                           "budget": {"total_timesteps": 50_000_000}}).config
    run = RunStore(root).create(cfg)
    seconds = int(HOURS * 3600)
    t0 = time.time() - seconds
    steps_per_s = 1000
    with open(RunDir(run).telemetry, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"t": t0, "kind": "status", "nvml": True, "reason": None}) + "\n")
        for i in range(seconds * TELEMETRY_HZ):
            t = t0 + i / TELEMETRY_HZ
            fh.write(json.dumps({"t": round(t, 3), "gpu": 0, "memory_used_bytes": 3_000_000_000 + (i * 7919) % 500_000_000,
                                 "memory_total_bytes": 8 * 2**30, "temperature_c": 60 + i % 20, "utilization_pct": 40 + i % 60,
                                 "power_w": 35.0 + (i % 50), "process_memory_bytes": 2_000_000_000 + i % 1000,
                                 "rss_bytes": 900_000_000}) + "\n")
    with open(RunDir(run).metrics, "w", encoding="utf-8") as fh:
        ep_every = seconds / EPISODES
        e = 0
        for s in range(seconds):
            t = t0 + s
            fh.write(json.dumps({"kind": "progress", "step": s * steps_per_s, "t": t, "fps": 1000.0 + s % 37,
                                 "total": 50_000_000}) + "\n")
            while e < EPISODES and int(e * ep_every) <= s:
                fh.write(json.dumps({"kind": "episode", "step": s * steps_per_s, "t": t, "reward": (e % 500) * 0.9,
                                     "length": 500}) + "\n")
                e += 1
            if s % 10 == 0:
                fh.write(json.dumps({"kind": "train", "step": s * steps_per_s, "t": t, "train/value_loss": 1 / (1 + s),
                                     "train/policy_gradient_loss": -0.01, "train/entropy_loss": -0.6}) + "\n")
    write_status(run, state="running", started_at=t0, **process_identity())
    return run


def pyqtgraph_own_drawing(monitor, on: bool) -> None:
    """Draw lines as pyqtgraph does on its own (``on``) or as rlpanel does: the bench's baseline.

    pyqtgraph's way: each whole series goes to ``setData`` and is peak-downsampled (~2 samples
    per pixel) and clipped to the view there; autoscale fits the newest point on every frame (once a frame: fitted
    to the downsampled data it would fit again on every paint, see app.plots.headroom).
    """
    from app.plots.drawing import with_breaks
    from app.plots.series_items import Series

    def whole_series(self, item, x, start, stop, buckets, warn_level):
        lx, ly = with_breaks(x, self.buf.values, self.buf.segments())
        self.curve.setData(lx, ly)
        return ly

    if not hasattr(Series, "_rlpanel_draw_line"):
        Series._rlpanel_draw_line = Series.draw_line
    Series.draw_line = whole_series if on else Series._rlpanel_draw_line
    for plot in monitor.all_plots():
        plot.getPlotItem().vb.pyqtgraph_range = on  # autoscale over every item's bounds, to the newest point
        for series in plot._series.values():
            if series.points:
                continue
            curve = series.curve
            curve.opts["autoDownsampleFactor"] = 2.0
            curve.setClipToView(on)
            curve.setDownsampling(auto=on, method="peak")
        plot.forget_drawn()


def reopen_from_cache(app, window, run: Path, reward, temperature, last_t: float) -> float:
    """Follow the run again, as a user opening it a second time does: its columns come from its cache."""
    window.follow_run(None)
    app.processEvents()
    start = time.perf_counter()
    window.follow_run(run)
    deadline = time.monotonic() + 300
    while (not reward.has_series("episode") or reward.buffer("episode").size < EPISODES
           or not temperature.has_series("gpu0") or float(temperature.buffer("gpu0").times[-1]) < last_t
           or window.monitor.loading):
        app.processEvents()
        if time.monotonic() > deadline:
            raise RuntimeError("timed out opening the run again")
    window.monitor.redraw()
    window.monitor.grab()
    return time.perf_counter() - start


def write_tick(metrics, telemetry, step: int, now: float) -> None:
    """A live worker's 50 ms: 1 episode, 1 progress record, 5 telemetry lines."""
    metrics.write(json.dumps({"kind": "episode", "step": step, "t": now, "reward": 400.0, "length": 500}) + "\n")
    metrics.write(json.dumps({"kind": "progress", "step": step, "t": now, "fps": 1000.0, "total": 50_000_000}) + "\n")
    for k in range(5):
        telemetry.write(json.dumps({"t": now + k * 0.01, "gpu": 0, "memory_used_bytes": 3e9, "memory_total_bytes": 8 * 2**30,
                                    "temperature_c": 70, "utilization_pct": 90, "power_w": 60.0,
                                    "process_memory_bytes": 2e9}) + "\n")
    metrics.flush()
    telemetry.flush()


def live_frames(app, monitor, reward, metrics, telemetry, step: int, frames: int = FRAMES // 2) -> tuple[list[float], list[int]]:
    """Frames as the window draws them: a tick's records arrive (the plots held meanwhile), then the Monitor's redraw
    (each plot gives its curves only what changed since its last frame) and a repaint of each plot that changed, whole
    (``grab()``: an offscreen window is not exposed, so Qt repaints nothing by itself; on screen Qt repaints the
    changed curves' rectangles, most of such a plot). Returns each frame's CPU seconds and the plots repainted."""
    cpu, views = [], []
    plots = monitor.all_plots()
    try:
        for _ in range(frames):
            for plot in plots:
                plot.paused = True  # the tick's records come in; nothing is drawn until the frame below
            now = time.time()
            step += 50
            write_tick(metrics, telemetry, step, now)
            deadline = time.monotonic() + FRAME_TIMEOUT_S
            while reward.buffer("episode").steps[-1] < step or monitor.gpu.plots["temperature_c"].buffer("gpu0").times[-1] < now:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the records at step {step} never reached the plots' buffers")
                app.processEvents()
                time.sleep(0.001)
            for plot in plots:
                plot.paused = False
            before = [[s.drawn for s in plot._series.values()] for plot in plots]
            c = time.process_time()
            monitor.redraw()
            changed = [plot for plot, was in zip(plots, before, strict=True) if [s.drawn for s in plot._series.values()] != was]
            for plot in changed:
                plot.grab()
            cpu.append(time.process_time() - c)
            views.append(len(changed))
    finally:
        for plot in plots:
            plot.paused = False
    return cpu, views


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.theme import apply_theme
    from app.threads.main_thread_gc import MainThreadGc

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        start = time.perf_counter()
        run = write_run(Path(tmp) / "runs")
        size_mb = sum(p.stat().st_size for p in run.iterdir() if p.is_file()) / 2**20
        print(f"wrote a {HOURS:g} h run ({size_mb:.0f} MB) in {time.perf_counter() - start:.1f} s", flush=True)

        # The user's saved UI state (last tab, geometry) must not leak in: with another tab
        # current the hidden Monitor never redraws and the bench would wait forever.
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        app = QApplication([])
        collector = MainThreadGc(app)  # as run_app does
        apply_theme(app)
        rss_before = rss_mb()
        window = MainWindow(Path(tmp) / "runs", confirm_close=False)
        window.resize(1600, 1000)
        window.show()
        monitor = window.monitor
        window.tabs.setCurrentWidget(monitor)
        reward = monitor.reward_plot

        start = time.perf_counter()
        window.follow_run(run)
        deadline = time.monotonic() + 300
        temperature = monitor.gpu.plots["temperature_c"]

        def gpu_samples() -> int:  # the series appears with the first telemetry batch
            return temperature.buffer("gpu0").size if temperature.has_series("gpu0") else 0

        from core.run.layout import RunDir
        from core.util.jsonl import tail_jsonl

        last_t = float(tail_jsonl(RunDir(run).telemetry, 4096)[-1]["t"])  # the newest sample written

        def newest_sample() -> float:  # older samples are kept as their envelope (a bounded buffer): look at the newest
            return float(temperature.buffer("gpu0").times[-1]) if gpu_samples() else 0.0

        while reward.buffer("episode").size < EPISODES or newest_sample() < last_t or monitor.loading:
            app.processEvents()
            if time.monotonic() > deadline:
                print("timed out loading the run:", reward.buffer("episode").size, gpu_samples())
                window.close()
                return 1
        monitor.redraw()
        monitor.grab()
        load_s = time.perf_counter() - start
        print(f"loaded into the window in {load_s:.1f} s: {reward.buffer('episode').size:,} episodes, "
              f"{int(HOURS * 3600 * TELEMETRY_HZ):,} samples per GPU series", flush=True)
        print(f"  kept per GPU series: {gpu_samples():,} points (older ones as their envelope); "
              f"parsed, not from the run's cache: {window.follower.controller.cached_batches == 0}", flush=True)
        reopen_s = reopen_from_cache(app, window, run, reward, temperature, last_t)
        print(f"opened again from the run's cache in {reopen_s:.2f} s   (goal: <= 1 s)", flush=True)

        # Live: a batch every 50 ms like a running worker (1 episode, 1 progress, 5 telemetry lines per tick).
        from core.run.layout import RunDir

        metrics = open(RunDir(run).metrics, "a", encoding="utf-8")
        telemetry = open(RunDir(run).telemetry, "a", encoding="utf-8")
        redraws: dict[bool, list[float]] = {False: [], True: []}  # by "drawn as pyqtgraph does on its own"
        cpu: dict[bool, list[float]] = {False: [], True: []}  # the same frames' CPU time (this machine is shared)
        set_cpu: dict[bool, list[float]] = {False: [], True: []}  # of which giving the curves their data
        floor_cpu: list[float] = []  # the tab rendered once more after a frame, nothing new
        latencies = []
        step = int(HOURS * 3600 * 1000)  # an int: a float step is a damaged record the follower drops
        for frame in range(FRAMES):
            native = (frame // BLOCK) % 2 == 1
            if frame % BLOCK == 0:
                pyqtgraph_own_drawing(monitor, native)
            now = time.time()
            step += 50
            write_tick(metrics, telemetry, step, now)
            written = time.perf_counter()
            frame_deadline = time.monotonic() + FRAME_TIMEOUT_S
            while True:
                if time.monotonic() > frame_deadline:
                    print(f"frame {frame}: the record at step {step} never reached the reward plot in {FRAME_TIMEOUT_S} s")
                    window.close()
                    return 1
                app.processEvents()
                # the episodes are a band on a long run (points when zoomed in): either ends with the newest
                band = reward.band_data("episode")
                shown_band = band is not None and reward.band_shown("episode")
                x = band[0] if shown_band else reward.curve("episode").getOriginalDataset()[0]
                if x is not None and len(x) and x[-1] >= step:
                    break
                time.sleep(0.001)
            if not native:
                latencies.append(time.perf_counter() - written)
            # The record is in the plot; now time one full redraw of the Monitor tab.
            t, c = time.perf_counter(), time.process_time()
            for plot in monitor.all_plots():
                plot.forget_drawn()  # redraw every curve, not only those that changed: the worst case
            monitor.redraw()
            set_cpu[native].append(time.process_time() - c)
            monitor.grab()
            redraws[native].append(time.perf_counter() - t)
            cpu[native].append(time.process_time() - c)
            if not native:  # the same tab rendered again with nothing new: the floor of any whole-tab render
                c = time.process_time()
                monitor.grab()
                floor_cpu.append(time.process_time() - c)
        pyqtgraph_own_drawing(monitor, False)
        frame_cpu, frame_views = live_frames(app, monitor, reward, metrics, telemetry, step)
        metrics.close()
        telemetry.close()
        rss = rss_mb()

        ms = [r * 1000 for r in redraws[False]]
        own = [r * 1000 for r in redraws[True]]
        shown = sum(plot.isVisible() for plot in monitor.all_plots())
        in_view = sum(plot.in_view() for plot in monitor.all_plots())
        print(f"redraw of the Monitor tab ({shown} plots shown, every curve): median {statistics.median(ms):.1f} ms, "
              f"p95 {percentile(ms, 0.95):.1f} ms   (goal: median <= 16 ms); CPU time median "
              f"{statistics.median(cpu[False]) * 1000:.1f} ms,"
              f" of which setData {statistics.median(set_cpu[False]) * 1000:.1f} ms")
        print(f"  the tab rendered again with nothing new: CPU time median {statistics.median(floor_cpu) * 1000:.1f} ms "
              f"(Qt painting its widgets and the plots' kept drawings: what any render of the whole tab costs, a resize's)")
        print(f"  plots in view, the only ones drawn: {in_view} of {shown} shown (the rest scrolled out of the chart grid)")
        print(f"  drawn as pyqtgraph does on its own, frames alternating with those: median "
              f"{statistics.median(own):.1f} ms, p95 {percentile(own, 0.95):.1f} ms, CPU time median "
              f"{statistics.median(cpu[True]) * 1000:.1f} ms; "
              f"ratio of medians {statistics.median(own) / statistics.median(ms):.2f}x")
        print(f"a frame as the window draws it (the curves whose data changed, each plot that changed repainted whole: "
              f"{statistics.median(frame_views):g} of {shown}): CPU time median {statistics.median(frame_cpu) * 1000:.1f} ms, "
              f"p95 {percentile(frame_cpu, 0.95) * 1000:.1f} ms   (goal: <= 16 ms)")
        print(f"process RSS with the {HOURS:g} h run loaded: {rss:.0f} MB (before the window: {rss_before:.0f} MB)   "
              f"(goal: <= 400 MB)")
        lat = [v * 1000 for v in latencies]
        print(f"record written -> in the plot's data: median {statistics.median(lat):.0f} ms, "
              f"max {max(lat):.0f} ms   (goal: < 1000 ms; poll interval {window.follower.controller.poll_ms} ms)")
        follower = window.follower.controller
        print("  the follower " + ("watches the run folder (file system change signals)" if follower.watching
                                   else f"polls ({follower.not_watched})"))
        print(f"loading the {HOURS:g} h history took {load_s:.1f} s")
        print("torch imported by the GUI:", "torch" in sys.modules)
        window.close()
        collector.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
