"""The README's screenshots, from synthetic run folders (no training, no GPU): run it under a display.

    Xvfb :13 -screen 0 1600x1000x24 &
    DISPLAY=:13 QT_QPA_PLATFORM=xcb python resources/screenshots/make_screenshots.py [OUT_DIR]

- ``monitor-12h.png``: a 12 h PPO run (50,000 noisy episodes as a min/max band behind the rolling
  mean, one chart per logged scalar, smoothing 0.9, GPU plots against their limits, a temperature
  near the slowdown threshold named in the status line);
- ``monitor-resumed.png``: a run stopped for an hour and resumed, on wall time: no line over the gap;
- ``runs.png``: the Runs tab with names, tags and a note;
- ``results.png``: the Results tab, an SAC run against a random baseline on their evaluations;
- ``paused.png``: a run the thermal guard paused (the GPU at 88 C for 10 s): the state and the
  reason in the status line, the GPU plots shaded where NVML said the clocks were slowed.
  ``--paused`` draws this one alone;
- ``morning-report.png``: the Results tab's morning report of a night (an agent against the
  uncontrolled baseline on the env's own measures, energy, a failed run with the end of its log).
  ``--morning`` draws this one alone.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

PPO_SCALARS = ("train/value_loss", "train/policy_gradient_loss", "train/entropy_loss", "train/approx_kl",
               "train/clip_fraction", "train/explained_variance", "train/learning_rate", "train/loss")


def write_lines(path: Path, records) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)


def new_run(runs: Path, name: str, algo: str = "PPO", env: str = "LunarLander-v3", total: int = 50_000_000) -> Path:
    from core.config.validate import validate_config
    from core.run.store import RunStore

    cfg = validate_config({"env": {"id": env}, "algo": algo, "name": name, "budget": {"total_timesteps": total}}).config
    return RunStore(runs).create(cfg)


def training(t0: float, seconds: int, step0: int, rng, episodes_per_s: float, start_reward: float, end_reward: float,
             steps_per_s: float = 1000.0, k0: float = 0.0, k1: float = 1.0) -> list[dict]:
    """Progress every second, noisy episodes around a rising mean, SB3's train scalars every 20 s."""
    out: list[dict] = []
    n_eps = int(seconds * episodes_per_s)
    ep_t = np.sort(rng.uniform(0, seconds, n_eps))
    ep_i = 0
    for s in range(seconds):
        t, step = t0 + s, step0 + int(s * steps_per_s)
        out.append({"kind": "progress", "step": step, "t": t, "fps": steps_per_s * (1 + 0.05 * rng.standard_normal()),
                    "total": 50_000_000})
        while ep_i < n_eps and ep_t[ep_i] <= s:
            share = (s / seconds)
            mean = start_reward + (end_reward - start_reward) * (1 - np.exp(-4 * share))
            out.append({"kind": "episode", "step": step, "t": t, "reward": float(mean + 45 * rng.standard_normal()),
                        "length": 400})
            ep_i += 1
        if s % 20 == 0:
            k = k0 + (k1 - k0) * s / seconds  # how far training is (the scalars' trends)
            out.append({"kind": "train", "step": step, "t": t, "train/n_updates": s // 20,
                        "train/value_loss": float(120 * np.exp(-3 * k) + 8 * rng.random()),
                        "train/policy_gradient_loss": float(-0.01 + 0.004 * rng.standard_normal()),
                        "train/entropy_loss": float(-1.35 + 0.7 * k + 0.02 * rng.standard_normal()),
                        "train/approx_kl": float(abs(0.012 + 0.004 * rng.standard_normal())),
                        "train/clip_fraction": float(abs(0.15 - 0.08 * k + 0.03 * rng.standard_normal())),
                        "train/explained_variance": float(min(0.99, 0.2 + 0.75 * k + 0.05 * rng.standard_normal())),
                        "train/learning_rate": 3e-4 * (1 - k), "train/loss": float(60 * np.exp(-3 * k) + 4 * rng.random())})
    return out


def telemetry(t0: float, seconds: int, rng, hot_from: float = 0.97) -> list[dict]:
    """One GPU at 1 Hz: an 8 GB laptop card, warming towards its slowdown threshold at the end."""
    out: list[dict] = [{"t": t0, "kind": "status", "nvml": True, "reason": None}]
    for s in range(seconds):
        k = s / seconds
        hot = k > hot_from
        out.append({"t": t0 + s, "gpu": 0, "memory_total_bytes": 8 * 2**30, "temperature_slowdown_c": 87,
                    "power_limit_w": 80.0,
                    "memory_used_bytes": int((3.1 + 0.2 * rng.random()) * 2**30), "process_memory_bytes": int(1.9 * 2**30),
                    "temperature_c": int(83 + 2 * rng.random()) if hot else int(66 + 6 * rng.random()),
                    "utilization_pct": int(55 + 30 * rng.random()), "power_w": round(48 + 15 * rng.random(), 1),
                    "process_cpu_pct": round(95 + 10 * rng.random(), 1), "rss_bytes": int((1.1 + 0.05 * k) * 2**30)})
        if s % 5 == 0:  # the run's own memory (PSS), read every few seconds
            out[-1].update(host_memory_bytes=int((0.62 + 0.03 * k) * 2**30), host_memory_measure="pss")
    return out


def twelve_hour_run(runs: Path) -> Path:
    from core.run.status import write_status
    from core.util.procs import process_identity

    rng = np.random.default_rng(13)
    run = new_run(runs, "ppo-lunar-12h")
    seconds = 12 * 3600
    t0 = time.time() - seconds
    write_lines(run / "metrics.jsonl", [{"kind": "attempt", "t": t0, "attempt": 1}])
    write_lines(run / "metrics.jsonl", training(t0, seconds, 0, rng, 50_000 / seconds, -180.0, 240.0))
    write_lines(run / "telemetry.jsonl", telemetry(t0, seconds, rng))
    write_status(run, state="running", started_at=t0, **process_identity())
    return run


def resumed_run(runs: Path) -> Path:
    from core.run.status import write_status

    rng = np.random.default_rng(7)
    run = new_run(runs, "ppo-lunar-resumed", total=3_000_000)
    t0 = time.time() - 4 * 3600
    first, pause, second = 3600, 3600, 2400
    write_lines(run / "metrics.jsonl", [{"kind": "attempt", "t": t0, "attempt": 1}])
    write_lines(run / "metrics.jsonl", training(t0, first, 0, rng, 0.25, -180.0, 60.0, steps_per_s=400, k1=0.6))
    write_lines(run / "telemetry.jsonl", telemetry(t0, first, rng, hot_from=2))
    t1 = t0 + first + pause
    write_lines(run / "metrics.jsonl", [{"kind": "event", "t": t0 + first, "level": "info", "message": "stopped by the user"},
                                        {"kind": "attempt", "t": t1, "attempt": 2}])
    write_lines(run / "metrics.jsonl", training(t1, second, first * 400, rng, 0.25, 60.0, 160.0, steps_per_s=400, k0=0.6))
    write_lines(run / "telemetry.jsonl", telemetry(t1, second, rng, hot_from=2))
    write_status(run, state="stopped", started_at=t1, ended_at=t1 + second, attempt=2, exit_reason="stop requested")
    return run


def paused_run(runs: Path) -> Path:
    """40 minutes of a run warming up until the thermal guard paused it (NVML throttle reasons at the end)."""
    from core.run.status import write_status
    from core.util.procs import process_identity

    rng = np.random.default_rng(5)
    run = new_run(runs, "ppo-lunar-hot", total=5_000_000)
    seconds = 2400
    t0 = time.time() - seconds
    write_lines(run / "metrics.jsonl", [{"kind": "attempt", "t": t0, "attempt": 1}])
    write_lines(run / "metrics.jsonl", training(t0, seconds - 60, 0, rng, 0.3, -180.0, 80.0, steps_per_s=900, k1=0.5))
    lines = telemetry(t0, seconds, rng, hot_from=2)
    for i, line in enumerate(lines[1:]):
        heat = min(1.0, i / (seconds - 70))
        line["temperature_c"] = int(64 + 24 * heat + 2 * rng.random()) if i < seconds - 60 else int(88 - (i - seconds + 60) / 12)
        line["throttle_reasons"] = (0x20 if heat > 0.93 else 0) | (0x4 if rng.random() < 0.02 else 0)
        if i >= seconds - 60:
            line.update(utilization_pct=0, power_w=12.0, process_cpu_pct=1.0)
    write_lines(run / "telemetry.jsonl", lines)
    reason = "GPU 0 at 88 C, at or above 82 C for 10 s: training paused until it is below 72 C"
    write_lines(run / "metrics.jsonl", [{"kind": "event", "t": t0 + seconds - 60, "level": "warning", "step": 2_106_000,
                                         "code": "thermal_pause", "message": reason}])
    write_status(run, state="paused", pause_reason=reason, started_at=t0, **process_identity())
    return run


def shoot_paused(app, window, run: Path, out_dir: Path) -> None:
    window.follow_run(run)
    window.tabs.setCurrentWidget(window.monitor)
    deadline = time.monotonic() + 120
    while (window.monitor.reward_plot.buffer("episode").size < 500 or window.monitor.loading
           or window.monitor.run_state != "paused"):
        app.processEvents()
        if time.monotonic() > deadline:
            raise SystemExit("timed out loading the paused run")
    settle(app, 2.0)
    window.grab().save(str(out_dir / "paused.png"))


def result_runs(runs: Path) -> dict[str, Path]:
    from core.run.annotations import Annotations, write_annotations
    from tests.results_helpers import make_result_run

    rng = np.random.default_rng(5)
    out = {
        "random": make_result_run(runs, "random-pendulum", list(rng.normal(-1230, 250, 20)), algo="random", env="Pendulum-v1"),
        "sac": make_result_run(runs, "sac-pendulum", list(np.linspace(-1400, -180, 60) + rng.normal(0, 90, 60)), algo="SAC",
                               env="Pendulum-v1", evals=[(-900.0, 200.0), (-420.0, 120.0), (-160.0, 60.0)], eval_episodes=10,
                               gpu_peak_bytes=3686 * 2**20, process_peak_bytes=829 * 2**20,
                               settings={"sac.learning_rate": 0.001}),
        "sac2": make_result_run(runs, "sac-pendulum-lr3e-4", list(np.linspace(-1400, -400, 60) + rng.normal(0, 90, 60)),
                                algo="SAC", env="Pendulum-v1", evals=[(-1000.0, 220.0), (-600.0, 150.0), (-350.0, 90.0)],
                                eval_episodes=10, gpu_peak_bytes=3650 * 2**20, process_peak_bytes=801 * 2**20,
                                settings={"sac.learning_rate": 0.0003}),
    }
    write_annotations(out["sac"], Annotations("SAC lr 1e-3", ("sweep", "pendulum"), "learns in 40k steps"))
    write_annotations(out["sac2"], Annotations("SAC lr 3e-4", ("sweep", "pendulum"), ""))
    return out


def night_runs(runs: Path) -> None:
    """A night on a building env: a random baseline, two agents (one failed), measures and energy, a queue."""
    from core.queue.state import QueueFolder
    from core.run.summary import summarize
    from core.util.files import read_json, write_json_atomic
    from tests.results_helpers import make_result_run

    rng = np.random.default_rng(3)
    t0 = time.time() - 9 * 3600
    made = {}
    for name, algo, state, co2, comfort, kwh, start in (
            ("uncontrolled", "random", "finished", 41.0, 52.0, None, t0),
            ("ppo-building", "PPO", "finished", 29.1, 71.0, 0.412, t0 + 600),
            ("sac-building", "SAC", "finished", 31.8, 68.5, 0.655, t0 + 3 * 3600),
            ("sac-building-lr1e-3", "SAC", "failed", 35.0, 60.0, 0.120, t0 + 6 * 3600)):
        rewards = list(np.linspace(-300, -120 if algo != "random" else -300, 40) + rng.normal(0, 20, 40))
        run = make_result_run(runs, name, rewards, state=state, algo=algo, env="Pendulum-v1", started_at=start,
                              seconds_per_episode=300.0 if algo != "random" else 5.0,
                              gpu_peak_bytes=None if algo == "random" else 3 * 2**30, peak_temperature_c=78.0)
        lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
        for rec in lines:
            if rec["kind"] == "episode":
                rec["m"] = {"co2_kg": float(co2 + rng.normal(0, 1)), "comfort_pct": float(comfort + rng.normal(0, 2))}
        (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
        summary = {**read_json(run / "summary.json"), **summarize(run), "energy_kwh": kwh, "state": state}
        if state == "failed":
            summary["exit_reason"] = "out of GPU memory: CUDA out of memory. Tried to allocate 2.00 GiB"
            status = read_json(run / "status.json")
            status.update(exit_reason=summary["exit_reason"], error={"message": summary["exit_reason"]})
            write_json_atomic(run / "status.json", status)
            (run / "worker.log").write_text("worker: pid 4242 attempt 1 starting\n...\n  File \"sac.py\", line 212, in train\n"
                                            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
        write_json_atomic(run / "summary.json", summary)
        made[name] = run
    folder = QueueFolder(runs)
    folder.path.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder.state, {"id": "night", "state": "finished with failures", "created_at": t0 - 60, "jobs": [
        {"name": n, "status": "failed" if "lr1e-3" in n else "finished", "run_id": r.name,
         "reason": "out of GPU memory" if "lr1e-3" in n else None} for n, r in made.items()]})


def shoot_morning(app, window, out_dir: Path) -> None:
    window.tabs.setCurrentWidget(window.results)
    dialog = window.results.show_morning_report()
    dialog.since_edit.setText(time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() - 10 * 3600)))
    dialog.resize(1400, 800)
    dialog.refresh()
    deadline = time.monotonic() + 60
    while dialog.report is None and time.monotonic() < deadline:
        app.processEvents()
    settle(app, 1.5)
    dialog.grab().save(str(out_dir / "morning-report.png"))
    dialog.close()


def settle(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out_dir = Path(args[0]) if args else Path(__file__).resolve().parent
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        runs = Path(tmp) / "runs"
        only_paused, only_morning = "--paused" in sys.argv, "--morning" in sys.argv
        hot = paused_run(runs)
        night = Path(tmp) / "night-runs"
        night_runs(night)
        if not (only_paused or only_morning):
            long_run, resumed, results = twelve_hour_run(runs), resumed_run(runs), result_runs(runs)

        from app.main_window import MainWindow
        from app.theme import apply_theme
        from app.threads.main_thread_gc import MainThreadGc

        app = QApplication([])
        collector = MainThreadGc(app)
        apply_theme(app)
        window = MainWindow(runs, confirm_close=False)
        window.resize(1600, 1000)
        window.show()
        monitor = window.monitor
        if only_paused or only_morning:
            if only_paused:
                shoot_paused(app, window, hot, out_dir)
            if only_morning:
                night_window = MainWindow(night, confirm_close=False)
                shoot_morning(app, night_window, out_dir)
                night_window.close()
            window.close()
            collector.stop()
            return 0

        window.follow_run(long_run)
        window.tabs.setCurrentWidget(monitor)
        monitor.set_smoothing(0.9)
        deadline = time.monotonic() + 600
        while monitor.reward_plot.buffer("episode").size < 49_000 or monitor.loading:
            app.processEvents()
            if time.monotonic() > deadline:
                print("timed out loading the 12 h run")
                return 1
        settle(app, 2.0)
        window.grab().save(str(out_dir / "monitor-12h.png"))

        window.follow_run(resumed)
        monitor.set_x_mode("time")
        deadline = time.monotonic() + 300
        while monitor.reward_plot.buffer("episode").size < 1000 or monitor.loading:
            app.processEvents()
            if time.monotonic() > deadline:
                print("timed out loading the resumed run")
                return 1
        settle(app, 2.0)
        window.grab().save(str(out_dir / "monitor-resumed.png"))
        monitor.set_x_mode("step")

        window.follow_run(None)
        window.tabs.setCurrentWidget(window.runs)
        window.runs.refresh()
        settle(app, 3.0)
        window.runs.select(results["sac"].name)
        settle(app, 1.0)
        window.grab().save(str(out_dir / "runs.png"))

        window.tabs.setCurrentWidget(window.results)
        window.results.refresh()
        settle(app, 3.0)
        window.results.set_checked([results["sac"].name, results["sac2"].name])
        window.results.set_baseline(results["random"].name)
        deadline = time.monotonic() + 60
        while window.results.loading and time.monotonic() < deadline:
            app.processEvents()
        window.splitter.setSizes([0, 1600])  # the table wide enough for the comparison columns
        settle(app, 1.0)
        table, model = window.results.table, window.results.table.model()
        titles = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
        # the comparison in view: the columns that tell the runs apart are shown, the bookkeeping hidden
        hidden = ("Run", "Algorithm", "Env", "Preset", "State", "Timesteps", "Wall time", "Steps/s", "Episodes",
                  "Best rolling", "Peak temperature", "Eval std")
        window.results.splitter.setSizes([0, 1600])  # the runs list folded away
        for c, title in enumerate(titles):
            table.setColumnHidden(c, str(title).startswith(hidden))
        table.resizeColumnsToContents()
        settle(app, 0.5)
        table.scrollTo(model.index(0, len(titles) - 1))
        settle(app, 2.0)
        window.grab().save(str(out_dir / "results.png"))
        window.splitter.setSizes([400, 1200])
        shoot_paused(app, window, hot, out_dir)
        night_window = MainWindow(night, confirm_close=False)
        shoot_morning(app, night_window, out_dir)
        night_window.close()
        window.close()
        collector.stop()
    print("wrote", ", ".join(p.name for p in sorted(out_dir.glob("*.png"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
