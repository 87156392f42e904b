"""A short real training run with the fake NVML on the worker's library path: telemetry.jsonl and summary.json."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.run.status import read_status
from core.util.files import read_json
from core.util.jsonl import read_jsonl
from tests.fakenvml import REPO

pytestmark = pytest.mark.training


def test_worker_records_telemetry_at_the_configured_rate(fake_nvml, runs_dir):
    from tests.training_helpers import make_run

    fake_nvml.configure(count=1, name="Fake RTX 3060 Laptop GPU", memory_used=2 << 30, memory_total=6 << 30,
                        temperature=72, util_gpu=64, power_mw=61500, not_supported="fan", procs="1:1000")
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 256, "batch_size": 64, "n_epochs": 4},
                              "runtime": {"n_envs": 2, "telemetry_hz": 10},
                              "budget": {"total_timesteps": 4000, "checkpoint_every": 0}})
    out = subprocess.run([sys.executable, "-m", "core.worker.main", str(run)], env=fake_nvml.env(), cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    log = (run / "worker.log").read_text() if (run / "worker.log").exists() else ""
    assert out.returncode == 0, out.stderr + log
    assert read_status(run).state == "finished"

    records = read_jsonl(run / "telemetry.jsonl")
    status = [r for r in records if r.get("kind") == "status"]
    samples = [r for r in records if "kind" not in r]
    assert len(status) == 1 and status[0]["nvml"] is True and status[0]["gpus"] == ["Fake RTX 3060 Laptop GPU"]
    assert samples and all(s["gpu"] == 0 for s in samples)
    first = samples[0]
    assert first["temperature_c"] == 72 and first["utilization_pct"] == 64
    assert first["memory_used_bytes"] == 2 << 30 and first["power_w"] == pytest.approx(61.5)
    assert first["fan_pct"] is None
    # this worker is not among NVML's GPU processes (and has no CUDA): its share is 0, said by NVML
    assert (first["process_memory_bytes"], first["process_memory_source"]) == (0, "nvml_process")
    assert max(s["rss_bytes"] for s in samples) > 100 << 20  # the worker has torch loaded

    # the rate: about 10 samples a second over the span the recorder ran
    span = samples[-1]["t"] - samples[0]["t"]
    assert span > 0.5
    assert 0.6 * 10 * span <= len(samples) - 1 <= 10 * span + 2

    summary = read_json(run / "summary.json")
    assert summary["peak_temperature_c"] == 72
    assert summary["peak_gpu_memory_bytes"] == 2 << 30
    assert summary["mean_utilization_pct"] == 64
    assert summary["peak_rss_bytes"] == max(s["rss_bytes"] for s in samples)
