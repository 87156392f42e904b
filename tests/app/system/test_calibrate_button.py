"""The System tab's Calibrate GPU: disabled, its tooltip says why (issue 42: it was disabled with no word why)."""

from __future__ import annotations

import threading

import pytest

import app.system.panel as system_panel
from app.system.panel import SystemPanel
from core.estimate.gpus import detected_profiles, known_profiles

REPORT_MS = 120_000  # the report probes torch in a subprocess: slow on a loaded 2-core machine


def new_panel(qtbot, tmp_path) -> SystemPanel:
    panel = SystemPanel(tmp_path)
    qtbot.addWidget(panel)
    return panel


def test_without_an_nvidia_gpu_the_tooltip_says_nvml_sees_none(qtbot, tmp_path):
    if detected_profiles():
        pytest.skip("NVML sees a GPU on this machine")
    panel = new_panel(qtbot, tmp_path)
    assert not panel.calibrate_button.isEnabled()
    assert panel.calibrate_button.toolTip().startswith("No NVIDIA GPU seen: NVML ")


def test_a_gpu_with_a_torch_without_cuda_says_the_calibration_needs_cuda_in_torch(qtbot, tmp_path, monkeypatch):
    # NVML seeing a card is the one thing faked: the report after it is this machine's, its torch probed for real
    monkeypatch.setattr(system_panel, "detected_profiles", lambda: known_profiles()[:1])
    panel = new_panel(qtbot, tmp_path)
    assert panel.calibrate_button.isEnabled()  # torch not known yet: Calibrate says for itself if it cannot
    with qtbot.waitSignal(panel.report_ready, timeout=REPORT_MS):
        panel.refresh()
    if "cuda:0" in panel.text.toPlainText():
        pytest.skip("torch has CUDA on this machine")
    assert not panel.calibrate_button.isEnabled()
    tip = panel.calibrate_button.toolTip()
    assert tip.endswith("the calibration measures CUDA through torch") or "CPU-only build" in tip, tip
    assert ("CPU-only build" in tip) == ("CPU-only build" in panel.text.toPlainText())  # as the report says


def test_while_it_calibrates_the_button_says_so(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(system_panel, "detected_profiles", lambda: known_profiles()[:1])
    release = threading.Event()
    monkeypatch.setattr(system_panel, "calibrate_card", lambda index=0: release.wait(60) and "Cannot calibrate: test")
    panel = new_panel(qtbot, tmp_path)
    panel.calibrate()
    assert not panel.calibrate_button.isEnabled()
    assert panel.calibrate_button.toolTip().startswith("Calibrating: the probe is measuring this GPU")
    release.set()
    qtbot.waitUntil(panel.calibrate_button.isEnabled, timeout=10_000)
    assert panel.calibrate_button.toolTip() == system_panel.CALIBRATE_TIP
    assert panel.calibration_label.text() == "Cannot calibrate: test"
