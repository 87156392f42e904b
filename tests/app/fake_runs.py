"""Run folders written by tests (no worker, no torch): status, metrics, telemetry, log."""

from __future__ import annotations

import json
import time
from pathlib import Path

from core.config.validate import validate_config
from core.run.store import RunStore
from core.util.files import write_json_atomic
from core.util.procs import process_identity


def make_fake_run(runs_dir: Path, state: str = "running", name: str | None = None, **status) -> Path:
    """A run folder whose status says ``state``; an active one names this test process as its worker."""
    raw = {"env": {"id": "CartPole-v1"}, "algo": "PPO", "budget": {"total_timesteps": 10000}}
    if name:
        raw["name"] = name
    run_dir = RunStore(runs_dir).create(validate_config(raw).config)
    data = json.loads((run_dir / "status.json").read_text())
    data.update(state=state, started_at=time.time(), **status)
    if state in ("starting", "running", "paused", "stopping"):
        data.update(process_identity())
    write_json_atomic(run_dir / "status.json", data)
    return run_dir


def append_jsonl(path: Path, records: list[dict], torn: str = "") -> None:
    """Append records; ``torn`` is written after them without a newline (a record being written)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in records) + torn)


def episodes(start: int, n: int, step0: int = 0) -> list[dict]:
    now = time.time()
    return [{"kind": "episode", "step": step0 + 20 * (start + i), "t": now + i, "reward": float(start + i), "length": 20}
            for i in range(n)]


def gpu_lines(n: int, gpu: int = 0, t0: float | None = None) -> list[dict]:
    t0 = t0 or time.time()
    return [{"t": t0 + 0.2 * i, "gpu": gpu, "memory_used_bytes": 2 * 2**30 + i, "memory_total_bytes": 8 * 2**30,
             "temperature_c": 60, "utilization_pct": 50, "power_w": 40.5, "process_memory_bytes": 2**30,
             "rss_bytes": 300 * 2**20} for i in range(n)]


# A stand-in worker (no torch): reports running, writes progress and episodes, honours STOP.
FAKE_WORKER = r'''
import json, sys, time
from pathlib import Path
from core.util.procs import process_identity
from core.run.status import write_status
run = Path(sys.argv[1])
write_status(run, state="running", started_at=time.time(), **process_identity())
step = 0
with open(run / "metrics.jsonl", "a") as fh:
    while not (run / "STOP").exists():
        step += 100
        fh.write(json.dumps({"kind": "progress", "step": step, "t": time.time(), "fps": 1000.0, "total": 10**6}) + "\n")
        fh.write(json.dumps({"kind": "episode", "step": step, "t": time.time(), "reward": step / 100, "length": 100}) + "\n")
        fh.flush()
        time.sleep(0.1)
    (run / "checkpoints").mkdir(exist_ok=True)
    (run / "checkpoints" / "latest.json").write_text("{}")  # what Resume looks for (no model in it: no torch here)
    fh.write(json.dumps({"kind": "event", "t": time.time(), "level": "info", "message": "checkpoint saved"}) + "\n")
print("fake worker stopping", flush=True)
write_status(run, state="stopped", ended_at=time.time(), exit_reason="stop requested")
'''


def start_fake_worker(run_dir: Path):
    """Start ``FAKE_WORKER`` for ``run_dir`` detached, output in worker.log; returns the Popen."""
    import subprocess
    import sys

    from core.util.procs import detach_popen_kwargs
    from tests.conftest import REPO

    log = open(run_dir / "worker.log", "ab")  # noqa: SIM115 (the child keeps it)
    return subprocess.Popen([sys.executable, "-c", FAKE_WORKER, str(run_dir)], cwd=REPO, stdout=log, stderr=log,
                            **detach_popen_kwargs())
