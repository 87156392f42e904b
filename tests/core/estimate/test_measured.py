"""The estimate against real GPU measurements (tests/core/estimate/measurements/): regression fixtures.

Every case was measured on a real card (see the file's ``machine`` and ``how``); the estimate for
that card's profile must stay within +-15 % of the run's NVML process peak (what the card really
loses) and within 0.85-1.15 of torch's peak reserved memory. A change to the model or to
configs/gpus.yaml that moves a case outside fails here, on a machine without a GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config.presets import resolve
from core.config.spaces import probe_spaces
from core.estimate.calibration import derive
from core.estimate.estimate import estimate
from core.estimate.gpus import get_profile, with_calibration

MIB = 1 << 20
HOST = 64 << 30
FILES = sorted((Path(__file__).parent / "measurements").glob("*.json"))
CASES = [(f.stem, case) for f in FILES for case in json.loads(f.read_text())["cases"]]
PROFILE = {"h100-2026-11-26": "H100 80GB", "h100-2026-11-26-runs": "H100 80GB"}


def _estimate(case: dict, gpu):
    cfg = resolve(case["preset"], {"algo": case["algo"], "env": {"id": case["env"]}, "runtime": {"device": "cuda"}}).config
    return estimate(cfg, probe_spaces(cfg.env), gpu, HOST, suggest=False)


@pytest.mark.parametrize(("source", "case"), CASES, ids=[f"{s}-{c['preset']}-{c['algo']}" for s, c in CASES])
def test_the_estimate_is_within_15_percent_of_the_measured_process_peak(source, case):
    gpu = get_profile(PROFILE[source])
    result = _estimate(case, gpu)
    ratio = result.gpu_bytes / (case["nvml_process_peak_mib"] * MIB)
    assert 0.85 <= ratio <= 1.15, (source, case, result.gpu_bytes / MIB)
    if case["reserved_mib"]:
        reserved = result.allocator_bytes / (case["reserved_mib"] * MIB)
        assert 0.85 <= reserved <= 1.15, (source, case, result.allocator_bytes / MIB)


PROBED = [(s, c) for s, c in CASES if s == "h100-2026-11-26"]


@pytest.mark.parametrize(("source", "case"), PROBED, ids=[f"{s}-{c['preset']}-{c['algo']}" for s, c in PROBED])
def test_a_calibration_from_the_card_s_own_probe_keeps_the_estimate_within_15_percent(source, case):
    probe = json.loads((Path(__file__).parent / "measurements" / f"{source}.json").read_text())["calibrate_probe"]
    gpu = with_calibration(get_profile(PROFILE[source]), derive(probe))
    assert gpu.source.startswith("measured on this card")
    ratio = _estimate(case, gpu).gpu_bytes / (case["nvml_process_peak_mib"] * MIB)
    assert 0.85 <= ratio <= 1.15


def test_the_h100_probe_derives_the_constants_the_runs_showed():
    probe = json.loads((Path(__file__).parent / "measurements" / "h100-2026-11-26.json").read_text())["calibrate_probe"]
    cal = derive(probe)
    # 742 MiB outside the allocator in every real run of the presets; 2 x 32 MiB of workspaces
    assert cal.context_bytes == 742 * MIB
    assert cal.workspace_bytes == 64 * MIB
    assert cal.cudnn_bytes == 16 * MIB and cal.cudnn_workspace_bytes == 20 * MIB
    assert cal.figure == "process" and cal.uuid.startswith("GPU-") and cal.driver == "580.159.04"


def test_eager_module_loading_is_counted(monkeypatch):
    case = CASES[0][1]
    gpu = get_profile("H100 80GB")
    lazy = _estimate(case, gpu)
    monkeypatch.setenv("CUDA_MODULE_LOADING", "EAGER")
    eager = _estimate(case, gpu)
    assert eager.gpu_bytes - lazy.gpu_bytes == gpu.eager_bytes
    assert "EAGER" in eager.term("cuda_context").note


def test_rlpanel_calibrate_on_a_second_h100_measured_the_same_constants():
    """The real `rlpanel calibrate --json` of another H100 (same driver and torch) against the first card's probe."""
    second = json.loads((Path(__file__).parent / "measurements" / "h100-2026-11-26-runs.json").read_text())["calibrate"]
    first = derive(json.loads((Path(__file__).parent / "measurements" / "h100-2026-11-26.json").read_text())["calibrate_probe"])
    assert second["uuid"] != first.uuid
    for key in ("context_bytes", "workspace_bytes", "cudnn_bytes", "cudnn_workspace_bytes"):
        assert second[key] == getattr(first, key), key
