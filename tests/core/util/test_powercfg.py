"""The power plan read from ``powercfg /query SCHEME_CURRENT`` output (English and German samples).

The samples follow the layout powercfg prints (a block per setting: its GUID line, alias,
possible values, then the current AC and DC indexes); no Windows machine was at hand to record
them, so they are shaped after outputs published in public repositories.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

from core.machine.doctor import power_lines
from core.util.powercfg import HIBERNATE_AFTER, LID_ACTION, SLEEP_AFTER, overnight_warnings, parse_query, read_power_plan

SAMPLES = Path(__file__).with_name("powercfg_samples")


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def test_a_default_laptop_plan_warns_of_sleep_and_the_lid():
    parsed = parse_query(sample("balanced_laptop_en.txt"))
    assert parsed["plan"] == "Balanced" and parsed["plan_guid"] == "381b4222-f694-41f0-9685-ff5bb260df2e"
    assert parsed["settings"][SLEEP_AFTER] == (1800, 900)
    assert parsed["settings"][HIBERNATE_AFTER] == (0, 10800)
    assert parsed["settings"][LID_ACTION] == (1, 1)
    warnings = overnight_warnings(parsed)
    assert len(warnings) == 2
    assert "sleeps after 30 min on AC power" in warnings[0] and "powercfg /change standby-timeout-ac 0" in warnings[0]
    assert "closing the lid on AC power makes the machine sleep" in warnings[1]
    assert "powercfg /setacvalueindex SCHEME_CURRENT SUB_BUTTONS LIDACTION 0" in warnings[1]


def test_a_german_plan_set_for_the_night_has_no_warning():
    parsed = parse_query(sample("overnight_ready_de.txt"))
    assert parsed["plan"] == "Höchstleistung"
    assert parsed["settings"][SLEEP_AFTER] == (0, 600) and parsed["settings"][LID_ACTION] == (0, 1)
    assert overnight_warnings(parsed) == []


def test_doctor_runs_powercfg_on_windows_only():
    calls = []

    def run(cmd, **kwargs):
        calls.append(cmd)
        return SimpleNamespace(returncode=0, stdout=sample("balanced_laptop_en.txt"), stderr="")

    assert read_power_plan("linux", run) is None and calls == []
    power = read_power_plan("win32", run)
    assert calls == [["powercfg", "/query", "SCHEME_CURRENT"]]
    lines = power_lines(power)
    assert lines[0] == "power plan  Balanced" and len(lines) == 3 and all(ln.startswith("WARNING     ") for ln in lines[1:])

    def missing(cmd, **kwargs):
        raise FileNotFoundError(2, "The system cannot find the file specified", "powercfg")

    assert power_lines(read_power_plan("win32", missing))[0].startswith("power plan  unknown: powercfg could not be run")
    failed = read_power_plan("win32", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "", "Access denied."))
    assert failed == {"error": "powercfg /query failed (exit 1): Access denied."}
