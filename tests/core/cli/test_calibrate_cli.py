"""``rlpanel calibrate``: with an injected probe result (this machine has no CUDA) and with the real probe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.cli.main import main
from core.estimate import calibration
from tests.conftest import REPO

MIB = 1 << 20
H100 = json.loads((REPO / "tests" / "core" / "estimate" / "measurements" / "h100-2026-11-26.json").read_text())["calibrate_probe"]
FAKE_UUID = "GPU-fa4e0000-0000-4000-8000-000000000000"  # the fake NVML's GPU 0


def test_without_cuda_it_says_so_in_one_line_and_exits_1():
    done = subprocess.run([sys.executable, "-m", "core.cli", "calibrate"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == ["rlpanel calibrate: cannot calibrate: this torch "
                                                 f"({calibration.torch_version()}) sees no CUDA device"]
    assert done.stdout == ""


def test_an_injected_probe_is_stored_and_the_card_s_estimate_uses_it(monkeypatch, user_home, fake_nvml, capsys):
    probe = {**H100, "uuid": FAKE_UUID, "driver": "550.54.14", "torch": calibration.torch_version()}
    asked = []
    monkeypatch.setattr(calibration, "run_probe", lambda index=0, timeout=180.0: asked.append(index) or probe)
    assert main(["calibrate", "--gpu", "0", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert asked == [0]
    assert answer["context_bytes"] == 742 * MIB and answer["workspace_bytes"] == 64 * MIB
    assert Path(answer["stored_in"]) == user_home / "calibrations.json"
    # a new process with the fake card: `rlpanel gpus` shows its constants as measured
    done = subprocess.run([sys.executable, "-m", "core.cli", "gpus", "--json"], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env=fake_nvml.env())
    detected = json.loads(done.stdout)["detected"][0]
    assert detected["uuid"] == FAKE_UUID
    assert detected["source"] == f"measured on this card {answer['measured_at'][:10]}"
    assert detected["context_bytes"] == 742 * MIB
    # another driver on the same card: the table again, until calibrated once more
    fake_nvml.configure(driver_version="560.1")
    done = subprocess.run([sys.executable, "-m", "core.cli", "gpus", "--json"], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env=fake_nvml.env())
    assert json.loads(done.stdout)["detected"][0]["source"].startswith("the table for")


def test_the_text_names_each_constant(monkeypatch, user_home, capsys):
    monkeypatch.setattr(calibration, "run_probe", lambda index=0, timeout=180.0: H100)
    assert main(["calibrate"]) == 0
    text = capsys.readouterr().out
    assert "calibrated NVIDIA H100 80GB HBM3" in text and "outside torch's allocator: 742 MiB" in text
    assert "cuBLAS workspaces:         64 MiB" in text and "stored in" in text
