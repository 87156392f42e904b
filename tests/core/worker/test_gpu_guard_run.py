"""Real runs under the fake NVML whose readings the test changes while the worker trains: the thermal
guard pauses and resumes (events, states, STOP while paused), the memory warning, throttle reasons,
energy and the timed checkpoint."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from core.run.status import read_status
from core.util.files import read_json
from core.util.jsonl import read_jsonl
from tests.fakenvml import REPO
from tests.training_helpers import last_step, make_run, records, wait_for, wait_state

pytestmark = pytest.mark.training
GIB = 1 << 30
COOL = {"count": 1, "temperature": 60, "temperature_slowdown": 90, "memory_total": 8 * GIB, "memory_used": 2 * GIB,
        "power_mw": 50000}


def start_worker(run, fake_nvml) -> subprocess.Popen:
    log = open(run / "worker.log", "ab")
    return subprocess.Popen([sys.executable, "-m", "core.worker.main", str(run)], env=fake_nvml.env(), cwd=REPO,
                            stdout=log, stderr=subprocess.STDOUT)


def events(run, code=None):
    return [e for e in records(run, "event") if code is None or e.get("code") == code]


def test_a_hot_gpu_pauses_training_and_it_resumes_below_the_limit_and_stop_works_while_paused(fake_nvml, runs_dir):
    fake_nvml.configure(COOL)
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                              "runtime": {"n_envs": 1, "telemetry_hz": 2, "torch_threads": 1},
                              "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 0, "checkpoint_minutes": 0}})
    proc = start_worker(run, fake_nvml)
    try:
        wait_state(run, ("running",))
        wait_for(lambda: last_step(run) > 0, 120, "training progress")
        note = [e["message"] for e in events(run) if "thermal guard" in e["message"]]
        assert note and "pause at 85 C" in note[0] and "resume below 75 C" in note[0], note  # slowdown 90 - 5, - 15

        fake_nvml.configure(COOL, temperature=88, memory_used=int(7.9 * GIB))  # 98.75 % of its memory too
        hot_at = time.monotonic()
        wait_state(run, ("paused",), timeout=120)
        assert time.monotonic() - hot_at >= 9  # at or above the limit for 10 s first
        status = read_status(run)
        assert "88 C" in status.pause_reason and "85 C" in status.pause_reason
        assert [e["level"] for e in events(run, "thermal_pause")] == ["warning"]
        memory = events(run, "gpu_memory")
        assert len(memory) == 1 and "99 %" in memory[0]["message"] and "Windows" in memory[0]["message"]

        step = last_step(run)
        time.sleep(3)
        assert last_step(run) == step, "training went on while paused"

        fake_nvml.configure(COOL, temperature=80, memory_used=int(7.9 * GIB))  # below 85, not below 75: still paused
        time.sleep(3)
        assert read_status(run).state == "paused"
        fake_nvml.configure(COOL, temperature=70)
        wait_state(run, ("running",), timeout=60)
        assert read_status(run).pause_reason is None and read_status(run).paused_s >= 3
        resumed = events(run, "thermal_resume")
        assert len(resumed) == 1 and "70 C" in resumed[0]["message"]
        wait_for(lambda: last_step(run) > step, 120, "training after the resume")

        fake_nvml.configure(COOL, temperature=95)  # hot again, and a STOP while paused
        wait_state(run, ("paused",), timeout=120)
        (run / "STOP").write_text("test\n")
        assert proc.wait(120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    status = read_status(run)
    assert status.state == "stopped", status
    assert len(events(run, "thermal_pause")) == 2 and len(events(run, "gpu_memory")) == 1
    assert (run / "checkpoints" / "latest.json").exists()  # a stop while paused saves as any stop does


def test_throttle_reasons_energy_and_a_checkpoint_on_the_timer(fake_nvml, runs_dir):
    fake_nvml.configure(COOL, throttle_reasons="0x44", energy_mj=7_000_000)
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                              "runtime": {"n_envs": 1, "telemetry_hz": 5, "torch_threads": 1},
                              "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 0,
                                         "checkpoint_minutes": 0.05}})  # every 3 s
    proc = start_worker(run, fake_nvml)
    try:
        wait_state(run, ("running",))
        wait_for(lambda: len(list((run / "checkpoints").glob("step_*.json"))) >= 2, 120, "two timed checkpoints")
        (run / "STOP").write_text("test\n")
        assert proc.wait(120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    samples = [r for r in read_jsonl(run / "telemetry.jsonl") if "kind" not in r]
    assert samples and {s["throttle_reasons"] for s in samples} == {0x44}
    counter = [s["energy_mj"] for s in samples]
    assert counter[0] >= 7_000_000 and counter == sorted(counter) and counter[-1] > counter[0]
    span = samples[-1]["t"] - samples[0]["t"]
    summary = read_json(run / "summary.json")
    assert summary["energy_source"] == "NVML energy counter"
    # the fake's counter grows at its power reading, 50 W
    assert summary["energy_kwh"] == pytest.approx(50 * span / 3.6e6, rel=0.15)
    assert summary["throttle_reasons"] == ["power cap", "thermal slowdown (hardware)"]
    assert summary["throttled_s"] == pytest.approx(len(samples) / 5, rel=0.2)


def test_energy_from_power_samples_without_the_counter(fake_nvml, runs_dir):
    fake_nvml.configure(COOL, not_supported="energy,throttle_reasons", power_mw=80000)
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                              "runtime": {"n_envs": 1, "telemetry_hz": 5, "torch_threads": 1},
                              "budget": {"total_timesteps": 3000, "checkpoint_every": 0}})
    proc = start_worker(run, fake_nvml)
    assert proc.wait(240) == 0, (run / "worker.log").read_text()
    samples = [r for r in read_jsonl(run / "telemetry.jsonl") if "kind" not in r]
    assert all(s["energy_mj"] is None and s["throttle_reasons"] is None for s in samples)
    span = samples[-1]["t"] - samples[0]["t"]
    summary = read_json(run / "summary.json")
    assert summary["energy_source"] == "power samples"
    assert summary["energy_kwh"] == pytest.approx(80 * span / 3.6e6, rel=0.01)
    assert summary["throttled_s"] is None and summary["throttle_reasons"] == []
    # the energy in the results table and its exports, with a CO2 estimate from the grid intensity given
    from openpyxl import load_workbook

    from core.results.export import to_markdown, to_xlsx
    from core.results.table import results
    from tests.training_helpers import cli

    row = results([run], grid_g_per_kwh=400)[0]
    assert row.energy_kwh == summary["energy_kwh"] and row.co2_kg == pytest.approx(summary["energy_kwh"] * 0.4)
    assert "GPU energy (kWh)" in to_markdown([row]) and "CO2 estimate (kg)" in to_markdown([row])
    import io

    sheet = load_workbook(io.BytesIO(to_xlsx([row]))).active
    header = [c.value for c in sheet[1]]
    assert sheet.cell(2, header.index("CO2 estimate (kg)") + 1).value == pytest.approx(row.co2_kg)
    out = cli("export", "--runs", run.name, "--runs-dir", str(runs_dir), "--format", "csv", "--grid-g-per-kwh", "400")
    assert out.returncode == 0 and "CO2 estimate (kg)" in out.stdout, out.stderr
    bad = cli("export", "--runs", run.name, "--runs-dir", str(runs_dir), "--grid-g-per-kwh", "-5")
    assert bad.returncode == 2 and "--grid-g-per-kwh" in bad.stderr and "g/kWh" in bad.stderr
