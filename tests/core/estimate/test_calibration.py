"""Self-calibration: the probe's answer turned into constants, stored per card, driver and torch, and used."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.estimate import calibration
from core.estimate.calibration import Calibration, CalibrationError, derive, lookup, save, stored
from core.estimate.gpus import GpuProfile, calibrated, without_calibration

MIB = 1 << 20
PROBE = json.loads((Path(__file__).parent / "measurements" / "h100-2026-11-26.json").read_text())["calibrate_probe"]


def card(**changes) -> GpuProfile:
    base = dict(name="this machine: NVIDIA H100 80GB HBM3", memory_bytes=80 << 30, compute_capability="9.0", tf32=True,
                generation="hopper", context_bytes=1, workspace_bytes=1, detected=True, index=0,
                uuid=PROBE["uuid"], driver=PROBE["driver"], source="the table for hopper")
    return GpuProfile(**{**base, **changes})


def test_derive_refuses_an_error_and_a_torn_answer():
    with pytest.raises(CalibrationError, match="sees no CUDA"):
        derive({"error": "this torch (2.13.0+cpu) sees no CUDA device"})
    with pytest.raises(CalibrationError, match="lacks its steps"):
        derive({"steps": [PROBE["steps"][0]]})


def test_wddm_without_a_per_process_figure_uses_the_card_s_used_memory():
    probe = copy.deepcopy(PROBE)
    for step in probe["steps"]:
        step["process_bytes"] = None
    cal = derive(probe)
    assert cal.figure == "card"
    # the card's used memory rose 9 MiB more than the process figure (the driver's own share)
    assert cal.context_bytes == PROBE["steps"][2]["card_delta_bytes"] - PROBE["steps"][2]["reserved_bytes"]


def test_another_process_freeing_memory_is_an_implausible_reading():
    probe = copy.deepcopy(PROBE)
    for step in probe["steps"]:
        step["process_bytes"] = step["reserved_bytes"] // 2
    with pytest.raises(CalibrationError, match="implausible"):
        derive(probe)


def test_stored_per_card_driver_and_torch_and_applied_to_the_matching_card(tmp_path, monkeypatch):
    monkeypatch.setenv("RLPANEL_HOME", str(tmp_path))
    cal = derive(PROBE)
    save(cal)
    assert set(stored()) == {cal.key}
    assert lookup(PROBE["uuid"], PROBE["driver"], PROBE["torch"]) == cal
    assert lookup(PROBE["uuid"], "999.0", PROBE["torch"]) is None  # a new driver: measure again
    assert lookup(PROBE["uuid"], PROBE["driver"], "2.99.0") is None  # a new torch too
    monkeypatch.setattr(calibration, "torch_version", lambda: PROBE["torch"])
    used = calibrated(card())
    assert used.context_bytes == 742 * MIB and used.workspace_bytes == 64 * MIB
    assert used.source == f"measured on this card {cal.day}"
    assert calibrated(card(uuid="GPU-other")).source == "the table for hopper"
    assert without_calibration(used).source == "the table for hopper"


def test_a_damaged_store_entry_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("RLPANEL_HOME", str(tmp_path))
    save(derive(PROBE))
    table = json.loads((tmp_path / "calibrations.json").read_text())
    table["broken"] = {"uuid": "x"}
    (tmp_path / "calibrations.json").write_text(json.dumps(table))
    assert len(stored()) == 1 and all(isinstance(c, Calibration) for c in stored().values())


def test_the_real_probe_on_a_machine_without_cuda_says_so_in_one_line():
    out = subprocess.run([sys.executable, "-m", calibration.CALIBRATE_MODULE], capture_output=True, text=True,
                         timeout=300)
    answer = json.loads(out.stdout)
    if "error" not in answer:
        pytest.skip("this machine has CUDA")
    assert out.returncode == 1 and "sees no CUDA device" in answer["error"]
    with pytest.raises(CalibrationError, match="sees no CUDA device"):
        calibration.run_calibration()


def test_the_key_is_torch_as_pip_installed_it_not_its_build_suffix(tmp_path, monkeypatch):
    """A PyPI CUDA wheel: torch.__version__ 2.11.0+cu130, the installed distribution 2.11.0 (seen on the H100)."""
    monkeypatch.setenv("RLPANEL_HOME", str(tmp_path))
    save(derive({**PROBE, "torch_dist": "2.11.0"}))
    monkeypatch.setattr(calibration, "torch_version", lambda: "2.11.0")
    assert calibrated(card()).source.startswith("measured on this card")
