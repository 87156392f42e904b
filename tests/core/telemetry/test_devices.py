"""CUDA device -> NVML GPU: the pure mapping (UUIDs, CUDA_VISIBLE_DEVICES in its forms), NVML's UUIDs
through the real pynvml over the fake library, and a real run with two fake GPUs and
CUDA_VISIBLE_DEVICES=1 whose telemetry, guard and energy are GPU 1's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.telemetry.devices import nvml_index
from core.util.files import read_json
from core.util.jsonl import read_jsonl
from tests.fakenvml import REPO

UUIDS = ["GPU-aaaaaaaa-0000-4000-8000-000000000000", "GPU-bbbbbbbb-1111-4000-8000-000000000001",
         "GPU-cccccccc-2222-4000-8000-000000000002", "GPU-dddddddd-3333-4000-8000-000000000003"]


@pytest.mark.parametrize(("cuda", "visible", "torch_uuid", "expected"), [
    (0, None, None, 0),  # nothing hidden: CUDA's index is NVML's
    (1, None, None, 1),
    (0, "2,3", None, 2),  # CUDA's device 0 is the machine's GPU 2
    (1, "2,3", None, 3),
    (1, " 3 , 0 ", None, 0),  # CUDA reorders as listed, spaces allowed
    (0, "GPU-cccccccc-2222-4000-8000-000000000002", None, 2),
    (0, "gpu-dddddddd", None, 3),  # a unique prefix of a UUID, any case
    (0, "GPU-", None, 0),  # a prefix that matches every GPU is no match: CUDA's index kept
    (0, "MIG-GPU-bbbbbbbb-1111-4000-8000-000000000001/1/0", None, 1),  # an old-style MIG slice: its GPU
    (0, "MIG-0e2f7a4c-5d6b-5b1e-9c8f-000000000000", None, 0),  # a MIG instance: not mapped
    (1, "2,foo,3", None, 1),  # CUDA stops at "foo": device 1 does not exist there; the index is kept
    (2, "2,3", None, 2),  # no entry for device 2
    (0, "7", None, 0),  # NVML has no GPU 7
    # torch's UUID wins, whatever the order CUDA chose (FASTEST_FIRST) and the variable say
    (0, "2,3", "dddddddd-3333-4000-8000-000000000003", 3),
    (0, None, "bbbbbbbb-1111-4000-8000-000000000001", 1),
    (0, "2,3", "ffffffff-0000-0000-0000-000000000000", 2),  # a UUID NVML does not list: the variable decides
])
def test_cuda_index_to_nvml_index(cuda, visible, torch_uuid, expected):
    match = nvml_index(cuda, UUIDS, torch_uuid=torch_uuid, visible=visible)
    assert match.gpu == expected, match.how
    assert match.how  # says how, for the run's event log


def test_how_names_the_rule_that_decided():
    assert "UUID" in nvml_index(0, UUIDS, torch_uuid=UUIDS[2][4:].upper()).how
    assert "CUDA_VISIBLE_DEVICES='2,3'" in nvml_index(0, UUIDS, visible="2,3").how
    assert "no GPU NVML lists" in nvml_index(0, UUIDS, visible="MIG-0e2f7a4c").how
    assert nvml_index(0, [None, None], visible="GPU-abc").gpu == 0  # NVML without UUIDs


def test_nvml_uuids_through_pynvml_over_the_fake(fake_nvml):
    fake_nvml.configure(count=3, **{"gpu2.uuid": "GPU-12345678-abcd-4000-8000-000000000002"}, not_supported="")
    out = fake_nvml.run_python("import json; from core.telemetry.nvml import gpu_uuids; print(json.dumps(gpu_uuids()))")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["GPU-fa4e0000-0000-4000-8000-000000000000", "GPU-fa4e0000-0000-4000-8000-000000000001",
                                      "GPU-12345678-abcd-4000-8000-000000000002"]
    fake_nvml.configure(count=2, **{"gpu1.not_supported": "uuid"})
    code = ("import json, pynvml; from core.telemetry.nvml import gpu_uuids; pynvml.nvmlInit(); "
            "h = pynvml.nvmlDeviceGetHandleByUUID(b'GPU-fa4e0000-0000-4000-8000-000000000000'); "
            "print(json.dumps([gpu_uuids(), pynvml.nvmlDeviceGetUUID(h)]))")
    out = fake_nvml.run_python(code)
    assert out.returncode == 0, out.stderr
    uuids, found = json.loads(out.stdout)
    assert uuids == ["GPU-fa4e0000-0000-4000-8000-000000000000", None]  # NotSupported reads as "not available"
    assert found == uuids[0]


@pytest.mark.training
@pytest.mark.parametrize("visible", ["1", "GPU-fa4e0000-0000-4000-8000-000000000001"])
def test_a_run_with_cuda_visible_devices_1_reads_gpu_1(fake_nvml, runs_dir, visible):
    from tests.training_helpers import make_run

    # GPU 0: another program's, warm and busy on 10 W; GPU 1 (the visible one) draws 120 W and slows down at 80 C
    fake_nvml.configure({"count": 2, "temperature": 70, "power_mw": 10_000, "temperature_slowdown": 95, "util_gpu": 90,
                         "gpu1.power_mw": 120_000, "gpu1.temperature_slowdown": 80, "gpu1.temperature": 55,
                         "gpu1.util_gpu": 20, "not_supported": "energy"})
    run = make_run(runs_dir, {"algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
                              "runtime": {"n_envs": 1, "telemetry_hz": 5, "torch_threads": 1},
                              "budget": {"total_timesteps": 2000, "checkpoint_every": 0}})
    env = fake_nvml.env()
    env["CUDA_VISIBLE_DEVICES"] = visible
    out = subprocess.run([sys.executable, "-m", "core.worker.main", str(run)], env=env, cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr + (run / "worker.log").read_text()
    lines = read_jsonl(run / "telemetry.jsonl")
    status = [r for r in lines if r.get("kind") == "status"]
    assert status[0]["run_gpu"] == 1 and status[0]["gpus"] == ["Fake GPU", "Fake GPU"]
    notes = [r["message"] for r in read_jsonl(run / "metrics.jsonl") if r.get("kind") == "event"]
    guard = next(m for m in notes if m.startswith("thermal guard"))
    assert "thermal guard on GPU 1: pause at 75 C" in guard and "CUDA_VISIBLE_DEVICES" in guard, guard
    # the energy is GPU 1's 120 W over the run, not GPU 0's 10 W added to it
    samples = [r for r in lines if r.get("gpu") == 1 and "kind" not in r]
    span = samples[-1]["t"] - samples[0]["t"]
    summary = read_json(run / "summary.json")
    assert summary["energy_kwh"] == pytest.approx(120 * span / 3.6e6, rel=0.02)
    assert summary["peak_temperature_c"] == 55 and summary["mean_utilization_pct"] == 20  # GPU 1's, not GPU 0's
