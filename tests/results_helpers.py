"""Run folders for results and export tests, written by hand (no worker, no torch).

A run gets the files a worker leaves: config.yaml, status.json, metrics.jsonl (episodes and
progress), and summary.json unless it crashed (a crashed worker never writes one).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from core.config.dotted import set_path
from core.config.validate import validate_config
from core.run.store import RunStore
from core.run.summary import summarize
from core.util.files import write_json_atomic


def rolling_means(values: list[float], window: int = 100) -> list[float]:
    """The mean of the last ``window`` plain values at each position (fewer at the start): the reference the
    tests check ``core.run.episodes.window_means`` and the summaries against, one value per episode."""
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def make_result_run(runs_dir: Path, name: str, rewards: list[float], state: str = "finished", algo: str = "A2C",
                    env: str = "CartPole-v1", steps_per_episode: int = 20, seconds_per_episode: float = 0.5,
                    started_at: float | None = None, preset: str | None = None, evals: list[tuple[float, float]] = (),
                    gpu_peak_bytes: int | None = None, peak_temperature_c: float = 71.0,
                    settings: dict | None = None, process_peak_bytes: int | None = None,
                    eval_episodes: int = 5) -> Path:
    """A run that played ``rewards`` (one episode each); ``crashed`` = status running with a dead pid.
    ``settings``: config values by dotted path (``{"a2c.learning_rate": 0.001}``); ``evals``: (mean, std)
    of ``eval_episodes`` each; ``gpu_peak_bytes`` / ``process_peak_bytes``: the card's and the run's own peak."""
    raw = {"name": name, "env": {"id": env}, "algo": algo, "budget": {"total_timesteps": 10_000}}
    for path, value in (settings or {}).items():
        raw = set_path(raw, path, value)
    run_dir = RunStore(runs_dir).create(validate_config(raw).config, preset=preset)
    t0 = started_at if started_at is not None else time.time() - 600
    records = [{"kind": "event", "t": t0, "level": "info", "message": "device cpu"}]
    for i, r in enumerate(rewards):
        step, t = steps_per_episode * (i + 1), t0 + seconds_per_episode * (i + 1)
        records.append({"kind": "episode", "step": step, "t": t, "reward": r, "length": steps_per_episode})
        records.append({"kind": "progress", "step": step, "t": t, "fps": 40.0, "total": 10_000})
    for k, (mean, std) in enumerate(evals):
        records.append({"kind": "eval", "step": steps_per_episode * (k + 1), "t": t0 + k, "mean_reward": mean,
                        "std_reward": std, "episodes": eval_episodes})
    with open(run_dir / "metrics.jsonl", "w", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(rec) + "\n" for rec in records))
    if gpu_peak_bytes is not None:  # three samples of GPU 0, the middle one the peak
        lines = [{"t": t0 + i, "gpu": 0, "memory_used_bytes": gpu_peak_bytes - (i % 2 == 0) * 2**20,
                  "memory_total_bytes": 8 * 2**30, "temperature_c": peak_temperature_c - (i % 2 == 0) * 5,
                  "utilization_pct": 50, "rss_bytes": 300 * 2**20,
                  "process_memory_bytes": None if process_peak_bytes is None else process_peak_bytes - (i % 2 == 0) * 2**20}
                 for i in range(3)]
        (run_dir / "telemetry.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    status = json.loads((run_dir / "status.json").read_text())
    status.update(started_at=t0, created_at=t0, attempt=1)
    if state == "crashed":
        status.update(state="running", pid=dead_pid(), pid_create_time=0.0)
    else:
        status.update(state=state, ended_at=t0 + seconds_per_episode * len(rewards),
                      train_time_s=seconds_per_episode * len(rewards), exit_reason=f"test run {state}")
    write_json_atomic(run_dir / "status.json", status)
    if state != "crashed":
        summary = summarize(run_dir)
        summary.update(state=state, exit_reason=f"test run {state}")
        write_json_atomic(run_dir / "summary.json", summary)
    return run_dir
