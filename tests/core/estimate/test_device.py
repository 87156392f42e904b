"""The device a worker launched here trains on: the torch probe, its cache, and what it changes."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from core.config.presets import resolve
from core.config.spaces import probe_spaces
from core.estimate import device as device_mod
from core.estimate.device import cached_torch_facts, device_issue, torch_facts, train_device
from core.estimate.estimate import estimate
from core.estimate.gpus import get_profile
from tests.conftest import REPO

HOST = 64 << 30
# what core.worker.torch_probe printed on a laptop with a CPU build and on one with a CUDA build
CPU_BUILD = {"torch": "2.5.1+cpu", "torch_cuda_build": None, "cuda_available": False, "devices": []}
CUDA_BUILD = {"torch": "2.5.1+cu124", "torch_cuda_build": "12.4", "cuda_available": True,
              "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 4060 Laptop GPU"}]}


def config(device: str = "auto"):
    return resolve("fast", {"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"device": device}}).config


def detected_card():
    """The 8 GB laptop card as NVML would report it on this machine."""
    return dataclasses.replace(get_profile("RTX 4060 Laptop"), detected=True, index=0)


def test_cpu_torch_beside_a_detected_gpu_trains_on_the_cpu_and_says_so():
    result = estimate(config(), probe_spaces(config().env), detected_card(), HOST, torch=CPU_BUILD)
    assert result.train_device == "cpu" and not result.on_gpu and result.gpu_bytes == 0
    assert len(result.warnings) == 1
    assert "trains on the CPU: this torch build (torch 2.5.1+cpu) has no CUDA" in result.warnings[0]
    assert "pip install torch --index-url" in result.warnings[0]
    data = result.to_json()
    assert data["train_device"] == "cpu" and data["warnings"] == result.warnings


def test_cuda_torch_trains_on_the_gpu():
    result = estimate(config(), probe_spaces(config().env), detected_card(), HOST, torch=CUDA_BUILD)
    assert result.train_device == "cuda:0" and result.on_gpu and result.warnings == []


def test_unknown_torch_keeps_the_estimate_of_the_card():
    result = estimate(config(), probe_spaces(config().env), detected_card(), HOST)
    assert result.train_device == "cuda:0" and result.on_gpu and result.warnings == []
    failed = {"error": "torch could not be imported: ImportError: DLL load failed"}
    assert train_device(config(), 0, failed) == ("cuda:0", ["cannot tell which device the worker trains on: "
                                                            "torch could not be imported: ImportError: DLL load failed"])


@pytest.mark.parametrize("requested, facts, want", [
    ("cpu", CUDA_BUILD, "cpu"), ("auto", None, "cpu"), ("auto", CPU_BUILD, "cpu"), ("cuda:1", CUDA_BUILD, "cuda:1"),
    ("cuda", CUDA_BUILD, "cuda:0"),
])
def test_train_device_without_a_detected_gpu(requested, facts, want):
    device, warnings = train_device(config(requested), None, facts)
    assert device == want and warnings == []


def test_cuda_asked_of_a_cpu_torch_is_refused_with_the_fix():
    issue = device_issue(config("cuda"), CPU_BUILD)
    assert issue is not None and issue.path == "runtime.device"
    assert "cuda was asked for but this torch build (torch 2.5.1+cpu) has no CUDA" in issue.message
    assert "set runtime.device to auto or cpu" in issue.message
    assert device_issue(config("cuda"), CUDA_BUILD) is None and device_issue(config("auto"), CPU_BUILD) is None
    assert device_issue(config("cuda"), None) is None  # unknown: the worker decides and says why


def test_the_probe_runs_once_per_interpreter_and_torch_version(monkeypatch, user_home):
    device_mod.TORCH.memo.clear()
    facts = torch_facts()
    assert facts["cuda_available"] is False and facts["torch"].startswith("2.")  # the CPU build of the test venv
    stored = json.loads((user_home / "cache" / "torch-probe.json").read_text())
    assert stored == {device_mod.TORCH.key(): facts} and sys.executable in device_mod.TORCH.key()

    def no_subprocess(*args, **kwargs):
        raise AssertionError("probed again")

    device_mod.TORCH.memo.clear()  # a new process: the answer comes from the user folder's cache
    monkeypatch.setattr(subprocess, "run", no_subprocess)
    assert cached_torch_facts() == facts and torch_facts() == facts


def test_train_refuses_cuda_on_a_cpu_torch(runs_dir):
    done = subprocess.run([sys.executable, "-m", "core.cli", "train", "--algo", "PPO", "--env", "CartPole-v1",
                           "--timesteps", "1000", "--set", "runtime.device=cuda", "--runs-dir", str(runs_dir)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "runtime.device" in done.stderr and "has no CUDA" in done.stderr and "set runtime.device to auto or cpu" in done.stderr
    assert list(runs_dir.iterdir()) == []  # nothing created, nothing launched


# --- one device rule: the target card plans, this machine trains ------------------------------

def laptop_preset(device: str = "auto"):
    return resolve("laptop-8gb", {"algo": "SAC", "env": {"id": "Pendulum-v1"}, "runtime": {"device": device}}).config


def test_a_preset_s_target_card_on_a_machine_without_a_gpu_trains_on_the_cpu_and_says_both():
    cfg = laptop_preset()
    result = estimate(cfg, probe_spaces(cfg.env), get_profile(cfg.target_gpu), HOST, torch=CPU_BUILD, here=[])
    assert result.train_device == "cpu"  # this machine's, whatever the plan
    assert result.planned_device == "cuda:0" and result.on_gpu and result.gpu_name == "RTX 4060 Laptop"
    assert result.warnings[0].startswith("planned for RTX 4060 Laptop (the target), which is not this machine: "
                                         "here it trains on cpu - torch 2.5.1+cpu has no CUDA; host RAM")
    here = result.this_machine
    assert here is not None and not here.on_gpu and here.gpu_bytes == 0 and here.train_device == "cpu"
    data = result.to_json()
    assert data["train_device"] == "cpu" and data["planned_device"] == "cuda:0"
    assert data["this_machine"]["train_device"] == "cpu" and data["this_machine"]["on_gpu"] is False


def test_a_target_card_beside_this_machine_s_card_estimates_both_cards():
    cfg = laptop_preset()
    h100 = dataclasses.replace(get_profile("H100 80GB"), name="this machine: NVIDIA H100 80GB HBM3", detected=True, index=0)
    result = estimate(cfg, probe_spaces(cfg.env), get_profile(cfg.target_gpu), HOST, torch=CUDA_BUILD, here=[h100])
    assert result.train_device == "cuda:0" and result.gpu_name == "RTX 4060 Laptop"
    here = result.this_machine
    assert here is not None and here.gpu_name == h100.name and here.capacity_bytes == h100.memory_bytes
    assert "here it trains on cuda:0 - NVIDIA H100 80GB HBM3;" in result.warnings[0]
    assert here.gpu_bytes > result.gpu_bytes  # the H100's context is bigger than the table's ada


def test_planned_for_this_machine_has_no_second_estimate():
    cfg = config()
    result = estimate(cfg, probe_spaces(cfg.env), detected_card(), HOST, torch=CUDA_BUILD)
    assert result.this_machine is None and result.planned_device == result.train_device == "cuda:0"
    assert result.gpu_source == "the table for ada"


def test_a_small_mlp_of_ppo_on_a_gpu_is_told_the_cpu_is_usually_faster():
    small = resolve(None, {"algo": "PPO", "env": {"id": "CartPole-v1"}}).config
    result = estimate(small, probe_spaces(small.env), detected_card(), HOST, torch=CUDA_BUILD)
    assert any("usually trains faster on the CPU" in w and "rlpanel tune" in w for w in result.warnings)
    heavy = resolve("heavy", {"algo": "PPO", "env": {"id": "CartPole-v1"}}).config  # 1.3 M parameters: GPU's work
    assert not any("faster on the CPU" in w for w in estimate(heavy, probe_spaces(heavy.env), detected_card(), HOST,
                                                              torch=CUDA_BUILD).warnings)
    on_cpu = estimate(small, probe_spaces(small.env), detected_card(), HOST, torch=CPU_BUILD)
    assert not any("faster on the CPU" in w for w in on_cpu.warnings)


def test_an_image_policy_on_the_cpu_is_warned():
    from core.config.trust import trust
    from tests.core.estimate.test_estimate import IMAGE_ENV

    trust(IMAGE_ENV.partition(":")[0])
    cfg = resolve(None, {"algo": "PPO", "env": {"entry_point": IMAGE_ENV}, "runtime": {"device": "cpu"},
                         "ppo": {"n_steps": 32, "batch_size": 32}}).config
    result = estimate(cfg, probe_spaces(cfg.env), None, HOST, torch=CPU_BUILD, here=[])
    assert any("image policy (CnnPolicy) trains on the CPU" in w for w in result.warnings)


def test_the_queue_judges_a_planned_estimate_by_this_machine():
    from core.queue.state import fits_next_to

    cfg = laptop_preset()
    planned = estimate(cfg, probe_spaces(cfg.env), get_profile(cfg.target_gpu), 1 << 30, torch=CPU_BUILD,
                       here=[]).to_json()
    ok, why = fits_next_to(planned, [planned, planned])
    # three CPU runs of this machine, not three runs with CUDA's host runtime on the laptop card
    here = planned["this_machine"]["host_bytes"]
    assert here < planned["host_bytes"]
    assert not ok and f"({3 * here / 2**20:,.0f} of 1,024 MiB)" in why


def test_rlpanel_estimate_prints_one_host_figure_for_a_plan_for_another_card():
    """The first night's step 1: laptop-8gb's target on a machine without it. The host line, the host terms and the
    plan's warning all give this machine's CPU run (not the target worker's CUDA host runtime beside them)."""
    import re

    from core.cli.estimate import format_estimate

    cfg = resolve("laptop-8gb", {"algo": "PPO", "env": {"id": "CartPole-v1"}}).config
    result = estimate(cfg, probe_spaces(cfg.env), get_profile(cfg.target_gpu), HOST, torch=CPU_BUILD, here=[])
    here = result.this_machine
    assert here is not None and here.host_bytes < result.host_bytes  # the target's worker holds CUDA's host side too
    text = format_estimate(result, cfg.algo, cfg.env.label)
    host_line = next(line for line in text.splitlines() if line.startswith("host: "))
    assert host_line.startswith(f"host: {here.host_bytes / 2**20:,.1f} of {HOST / 2**20:,.1f} MiB ")
    host_rows = [line.split() for line in text.splitlines() if re.match(r"\S+\s+host\s", line)]
    assert sum(float(row[2].replace(",", "")) for row in host_rows) == pytest.approx(here.host_bytes / 2**20, abs=0.5)
    assert ["worker_runtime", "host", "350.0"] == next(row for row in host_rows if row[0] == "worker_runtime")[:3]
    assert f"host RAM {here.host_bytes / 2**20:,.0f} MiB, fits" in text  # the plan's warning: the same figure
    assert "the host terms are this machine's, where it trains on cpu" in text
