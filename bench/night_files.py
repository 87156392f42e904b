"""Bytes per hour of each growing file of a run folder, measured on a real run.

Trains PPO on CartPole-v1 for ``--seconds`` of wall time with telemetry at 5 Hz (the test
suite's fake NVML, one GPU, when ``--fake-nvml`` is given, else whatever NVML the machine has), then
reports, per hour of training at the speed this machine reached:

- ``metrics.jsonl``: grows with steps and episodes (no thinning: about ``bytes/1k steps``);
- ``telemetry.jsonl``: at full rate, and after thinning (what an hour older than an hour costs);
- ``worker.log``: the worker's and its supervisor's lines; bounded at 2 x 16 MiB by rotation.

    python bench/night_files.py --seconds 60 [--fake-nvml]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--fake-nvml", action="store_true", help="one GPU from the test suite's fake NVML (Linux, gcc)")
    args = parser.parse_args()
    from core.config.validate import validate_config
    from core.run.control import launch_worker, request_stop
    from core.run.layout import RunDir
    from core.run.status import read_status
    from core.run.store import RunStore
    from core.telemetry.thinning import thin_telemetry
    from core.util.jsonl import read_jsonl

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RLPANEL_HOME"] = tmp
        cfg = validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"n_envs": 4, "telemetry_hz": 5},
                               "budget": {"total_timesteps": 100_000_000, "checkpoint_every": 10_000_000}}).config
        run = RunStore(Path(tmp) / "runs").create(cfg)
        extra = None
        if args.fake_nvml:
            from tests.fakenvml import FakeNvml, compile_fake_nvml

            fake = FakeNvml(compile_fake_nvml(Path(tmp) / "nvml"), Path(tmp) / "nvml.cfg")
            extra = {k: fake.env()[k] for k in ("LD_LIBRARY_PATH", "FAKE_NVML_CONFIG")}
        proc = launch_worker(run, reap=False, extra_env=extra)
        while read_status(run).get("state") != "running":
            time.sleep(0.2)
        started = time.time()
        time.sleep(args.seconds)
        request_stop(run)
        proc.wait(300)
        wall = max(time.time() - started, 1e-9)
        layout = RunDir(run)
        steps = max((r.get("step", 0) for r in read_jsonl(layout.metrics)), default=0)
        per_hour = 3600.0 / wall
        copy = Path(tmp) / "telemetry-thinned.jsonl"
        shutil.copyfile(layout.telemetry, copy)
        thin_telemetry(copy, time.time() + 1)  # everything "older than an hour": the thinned rate
        rows = [("metrics.jsonl", layout.metrics.stat().st_size), ("telemetry.jsonl (5 Hz)", layout.telemetry.stat().st_size),
                ("telemetry.jsonl thinned", copy.stat().st_size), ("worker.log", layout.worker_log.stat().st_size)]
        print(f"{steps:,} steps in {wall:.0f} s ({steps / wall:,.0f} steps/s)")
        for name, size in rows:
            print(f"{name:<26} {size * per_hour / 2**20:8.2f} MiB/hour   ({size:,} bytes measured)")
        print(f"metrics.jsonl per 1,000 steps: {layout.metrics.stat().st_size / max(steps, 1) * 1000:,.0f} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
