"""The fit bar: verdict against an 8 GB profile, the suggested fix, launch confirmation."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.configure.fit_bar import format_bytes
from app.configure.launch_row import LaunchRequest
from core.config.dotted import get_path
from tests.app.configure.helpers import TIMEOUT_MS, new_panel, type_into, wait_settled
from tests.conftest import REPO

LAPTOP = "RTX 4060 Laptop"


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def choose_target(panel, name: str) -> None:
    combo = panel.fit_box.target_combo
    combo.setCurrentIndex(combo.findData(name))
    combo.activated.emit(combo.currentIndex())


def test_oversized_run_does_not_fit_8gb_and_the_suggestion_fixes_it(qtbot, panel):
    panel.select_preset("beast")
    choose_target(panel, LAPTOP)
    type_into(qtbot, panel, "policy.net_arch", "16384, 16384")
    wait_settled(qtbot, panel)
    box = panel.fit_box
    assert panel.current_config().target_gpu == LAPTOP
    assert box.verdict_label.text() == "does not fit"
    assert 7 * 1024**3 < box.gpu_bar.capacity <= 8 * 1024**3
    assert box.gpu_bar.total() > box.gpu_bar.capacity
    assert not box.suggestion_button.isHidden()
    suggestion = panel.current_estimate().suggestion

    with qtbot.waitSignal(panel.estimate_changed, timeout=TIMEOUT_MS,
                          check_params_cb=lambda e: e is not None and e.verdict != "does not fit"):
        qtbot.mouseClick(box.suggestion_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, panel)
    assert box.verdict_label.text() in ("fits", "tight")
    cfg = panel.current_config().model_dump(mode="json")
    assert get_path(cfg, suggestion.path) == suggestion.new
    assert panel.state.is_changed(suggestion.path)
    assert panel.rows[suggestion.path].text() == "8192, 8192"


def test_launch_of_a_run_that_does_not_fit_asks_first(qtbot, panel, monkeypatch):
    panel.select_preset("beast")
    choose_target(panel, LAPTOP)
    type_into(qtbot, panel, "policy.net_arch", "16384, 16384")
    wait_settled(qtbot, panel)
    asked = []
    monkeypatch.setattr(panel, "confirm_no_fit", lambda estimate: asked.append(estimate) or False)
    with qtbot.assertNotEmitted(panel.launch_requested):
        assert panel.request_launch() is False
    assert asked and asked[0].verdict == "does not fit"

    monkeypatch.setattr(panel, "confirm_no_fit", lambda estimate: True)
    # the plan is for a laptop card, not this machine: Launch asks that too (a real dialog would block the test)
    device_asked = []
    monkeypatch.setattr(panel, "confirm_warnings", lambda estimate: device_asked.append(estimate) or True)
    with qtbot.waitSignal(panel.launch_requested, timeout=TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.launch_button, Qt.MouseButton.LeftButton)
    request = blocker.args[0]
    assert isinstance(request, LaunchRequest)
    assert request.preset == "beast" and request.config.policy.net_arch == [16384, 16384]
    assert request.estimate.verdict == "does not fit"
    assert device_asked and device_asked[0].device_warnings[0].startswith("planned for RTX 4060 Laptop")


def test_a_run_that_fits_launches_without_asking(qtbot, panel, monkeypatch):
    panel.select_preset("fast")
    wait_settled(qtbot, panel)
    monkeypatch.setattr(panel, "confirm_no_fit", lambda estimate: pytest.fail("asked for a run that fits"))
    with qtbot.waitSignal(panel.launch_requested, timeout=TIMEOUT_MS) as blocker:
        panel.request_launch()
    assert blocker.args[0].config.ppo.n_epochs == 15 and blocker.args[0].estimate is not None


def test_panel_never_imports_torch(tmp_path):
    script = textwrap.dedent("""
        import os, sys
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from app.configure.panel import ConfigurePanel
        panel = ConfigurePanel()
        panel.show()
        panel.select_preset("laptop-8gb")
        panel.set_field("env", {"id": "Pendulum-v1", "entry_point": None, "kwargs": {}})
        panel.validate_now()
        panel.model.spaces.wait(60000)
        app.processEvents()
        panel.validate_now()
        assert panel.current_estimate() is not None, panel.errors()
        bad = [m for m in ("torch", "stable_baselines3") if m in sys.modules]
        print("IMPORTED:", bad)
        sys.exit(1 if bad else 0)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=240,
                          env={**__import__("os").environ, "RLPANEL_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "IMPORTED: []" in done.stdout


def test_memory_bar_segments_have_their_own_tooltips(qtbot):
    from app.configure.fit_bar import MemoryBar

    bar = MemoryBar()
    qtbot.addWidget(bar)
    bar.resize(402, 20)
    bar.set_data([("parameters", 1 << 30), ("activations", 3 << 30)], 8 << 30)
    assert bar.segment_at(10) == 0 and bar.segment_at(100) == 1 and bar.segment_at(300) is None
    assert "activations: 3.00 GiB" in bar.summary() and "of 8.00 GiB" in bar.summary()


def test_the_fit_bar_shows_the_estimate_once_the_spaces_are_read(qtbot, panel):
    """Nothing but the env probe finishing: the verdict appears without another edit or validation."""
    qtbot.waitUntil(lambda: panel.model.estimate is not None, timeout=TIMEOUT_MS)
    assert panel.fit_box.verdict_label.text() == panel.model.estimate.verdict
    assert panel.fit_box.host_text.text().endswith("GiB")


def test_a_preset_s_target_that_is_not_this_machine_shows_both(qtbot, panel):
    """laptop-8gb plans for an RTX 4060 Laptop; this machine (no NVML GPU) trains on the CPU: both are shown."""
    panel.select_preset("laptop-8gb")
    panel.set_field("env", {"id": "Pendulum-v1", "entry_point": None, "kwargs": {}})
    wait_settled(qtbot, panel)
    box = panel.fit_box
    assert panel.current_config().target_gpu == LAPTOP
    est = panel.current_estimate()
    assert est.train_device == "cpu" and est.this_machine is not None
    assert not box.plan_label.isHidden()
    lines = box.plan_label.text().splitlines()
    assert lines[0].startswith("This machine: trains on cpu - ")
    assert lines[1].startswith(f"{LAPTOP}, the target (the GPU bar): fits ")
    # the Host row is this machine's CPU run, in its bar, its text and the plan's line alike: one figure
    host = format_bytes(est.this_machine.host_bytes)
    assert box.host_bar.total() == est.this_machine.host_bytes < est.host_bytes  # the target's worker holds CUDA too
    assert box.host_text.text() == f"{host} / {format_bytes(box.host_bar.capacity)}"
    assert f"host RAM {host}, fits: the Host bar" in lines[0]
    assert box.gpu_bar.total() == est.gpu_bytes and f"fits {format_bytes(est.gpu_bytes)} of " in lines[1]
    assert "GPU costs from the table for ada (estimated)" in box.source_label.text()
    assert "planned for" not in box.warning_label.text()  # said once, in the plan's lines


def test_calibrate_in_the_system_tab_says_why_not_without_cuda(qtbot, tmp_path):
    from app.system.panel import SystemPanel

    system = SystemPanel(tmp_path)
    qtbot.addWidget(system)
    assert not system.calibrate_button.isEnabled()  # no GPU detected here
    system.calibrate()
    qtbot.waitUntil(lambda: system.calibration_label.text().startswith("Cannot calibrate:"), timeout=120_000)
    assert "sees no CUDA device" in system.calibration_label.text()


def test_the_launch_on_cpu_question_launches_on_enter(qtbot, panel):
    """The question before launching on another device than planned has Yes (launch) as its default: Enter launches."""
    panel.select_preset("fast")
    choose_target(panel, LAPTOP)  # planned for a laptop card, trained here on the CPU: Launch asks
    wait_settled(qtbot, panel)
    estimate = panel.current_estimate()
    assert estimate.device_warnings and estimate.train_device == "cpu"
    seen = {}

    def answer() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen["question"] = box.text().splitlines()[-1]
        seen["default"] = box.standardButton(box.defaultButton())
        qtbot.keyClick(box, Qt.Key.Key_Return)

    QTimer.singleShot(0, answer)  # runs inside the dialog's own event loop
    assert panel.confirm_warnings(estimate) is True
    assert seen == {"question": "Launch on cpu anyway?", "default": QMessageBox.StandardButton.Yes}


@pytest.mark.parametrize("platform", ["win32", "linux"])
def test_on_windows_the_fit_bar_and_launch_s_question_say_a_run_past_the_card_will_crawl(qtbot, platform):
    """The estimate for this machine's 8 GB card under an injected platform, shown by the real fit bar."""
    from app.configure.fit_bar import FitBox, no_fit_reason
    from core.estimate.result import CRAWL_TEXT
    from tests.core.estimate.test_windows_crawl import estimate_here, too_big

    box = FitBox()
    qtbot.addWidget(box)
    box.show()
    result = estimate_here(too_big(), platform)
    box.show_estimate(result, 64 << 30)
    assert box.verdict_label.text() == "does not fit"
    said = f"Does not fit on this card: {CRAWL_TEXT}."
    if platform == "win32":
        assert box.warning_label.isVisible() and box.warning_label.text().splitlines()[0] == said
        assert "Prefer No Sysmem Fallback" in box.warning_label.text()
        assert "On Windows the driver moves the rest to system RAM" in no_fit_reason(result)
    else:
        assert "system RAM" not in box.warning_label.text() and "system RAM" not in no_fit_reason(result)
