"""The System tab shows the doctor's Windows lines (battery and power mode, the traps), as ``rlpanel doctor`` prints
them: a Windows machine's report, made from recorded answers, reaches the panel through its real refresh."""

from __future__ import annotations

from collections import namedtuple

import app.system.panel as system_panel
from app.system.panel import SystemPanel
from core.machine.doctor import format_report
from core.machine.windows_traps import windows_lines, windows_section
from core.util.long_paths import FILESYSTEM_KEY
from core.util.power_source import SCHEMES_KEY, read_power_source
from core.util.tdr import GRAPHICS_KEY
from tests.windows_recorded import powershell

RUNS = "C:\\Users\\ada\\OneDrive\\Documents\\rlpanel\\runs"
PYTHON = "C:\\Python311\\python.exe"
Battery = namedtuple("Battery", "percent secsleft power_plugged")


def windows_report() -> dict:
    values = {(FILESYSTEM_KEY, None): True, (GRAPHICS_KEY, None): True, (SCHEMES_KEY, None): True,
              (SCHEMES_KEY, "ActiveOverlayDcPowerScheme"): "961cc777-2547-4f9d-8174-7d86181b8a7a"}
    registry = lambda key, name: values.get((key, name))  # noqa: E731
    return {"python": "3.11.7", "executable": PYTHON, "platform": "Windows-11-10.0.22631-SP0", "user_folder": "U",
            "runs_dir": RUNS, "disk_free_bytes": 2**40, "torch": {"error": "not probed in this test"},
            "nvml": {"available": False, "reason": "no driver"}, "power": None, "windows_update": None,
            "power_source": read_power_source("win32", lambda: Battery(41, -1, False), registry),
            "windows": windows_section(RUNS, "551.86", PYTHON, "win32", registry, powershell("admin_cfa_on.json"))}


def test_the_system_tab_shows_the_windows_lines(qtbot, tmp_path, monkeypatch):
    data = windows_report()
    monkeypatch.setattr(system_panel, "gather_report", lambda runs_dir: data)
    panel = SystemPanel(tmp_path)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.report_ready, timeout=10_000):
        panel.refresh()
    shown = panel.text.toPlainText()
    assert shown == format_report(data)  # the same text rlpanel doctor prints
    lines = shown.splitlines()
    assert "power       on battery, battery 41 %; power mode Best power efficiency" in lines
    assert sum(line.startswith("WARNING     ") for line in lines) == 2  # on battery; efficiency mode
    assert lines[-5:] == windows_lines(data["windows"])
    assert lines[-5].startswith("defender    ") and lines[-1].startswith("TDR         ")
