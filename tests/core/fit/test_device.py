"""The device a worker launched here trains on: the torch probe, its cache, and what it changes."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from core.config.presets import resolve
from core.config.spaces import probe_spaces
from core.fit import device as device_mod
from core.fit.device import cached_torch_facts, device_issue, torch_facts, train_device
from core.fit.estimate import estimate
from core.fit.gpus import get_profile
from tests.conftest import REPO

HOST = 64 << 30
# what core.training.probe printed on a laptop with a CPU build and on one with a CUDA build
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
    device_mod._memo.clear()
    facts = torch_facts()
    assert facts["cuda_available"] is False and facts["torch"].startswith("2.")  # the CPU build of the test venv
    stored = json.loads((user_home / "cache" / "torch-probe.json").read_text())
    assert stored == {device_mod.probe_key(): facts} and sys.executable in device_mod.probe_key()

    def no_subprocess(*args, **kwargs):
        raise AssertionError("probed again")

    device_mod._memo.clear()  # a new process: the answer comes from the user folder's cache
    monkeypatch.setattr(subprocess, "run", no_subprocess)
    assert cached_torch_facts() == facts and torch_facts() == facts


def test_train_refuses_cuda_on_a_cpu_torch(runs_dir):
    done = subprocess.run([sys.executable, "-m", "core.cli", "train", "--algo", "PPO", "--env", "CartPole-v1",
                           "--timesteps", "1000", "--set", "runtime.device=cuda", "--runs-dir", str(runs_dir)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "runtime.device" in done.stderr and "has no CUDA" in done.stderr and "set runtime.device to auto or cpu" in done.stderr
    assert list(runs_dir.iterdir()) == []  # nothing created, nothing launched
