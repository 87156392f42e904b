"""The doctor's Windows checks, on a recorded registry and a recorded Get-MpPreference: each a line with its fix,
and ``windows`` in the report (every key always, None off Windows)."""

from __future__ import annotations

import json

from core.machine.doctor import format_report
from core.machine.windows_traps import CHECKS, sysmem_fallback, tdr, windows_lines, windows_section
from core.util.long_paths import FILESYSTEM_KEY
from core.util.tdr import GRAPHICS_KEY
from tests.windows_recorded import powershell

PYTHON = "C:\\Users\\ada\\AppData\\Local\\Programs\\Python\\Python311\\python.exe"
RUNS_IN_DOCUMENTS = "C:\\Users\\ada\\OneDrive\\Documents\\rlpanel\\runs"


def registry(values: dict):
    return lambda key, name: values.get((key, name))


DEFAULT_WINDOWS = registry({(FILESYSTEM_KEY, None): True, (GRAPHICS_KEY, None): True})  # keys there, values absent


def test_a_default_laptop_gets_a_line_and_a_fix_for_each_trap():
    section = windows_section(RUNS_IN_DOCUMENTS, "551.86", PYTHON, "win32", DEFAULT_WINDOWS, powershell("admin_cfa_on.json"))
    assert list(section) == list(CHECKS)
    assert [section[k]["ok"] for k in CHECKS] == [False, False, False, None, False]
    lines = windows_lines(section)
    assert len(lines) == 5 and all(line[:12].strip() and line[11] == " " for line in lines)  # a label, then the text
    defender, folders, long_paths, sysmem, timeout = lines
    assert defender.startswith("defender    Microsoft Defender scans every checkpoint written to the runs folder")
    assert defender.endswith(f'in an administrator PowerShell: Add-MpPreference -ExclusionPath "{RUNS_IN_DOCUMENTS}"')
    assert folders.startswith("protected   Controlled Folder Access is on and the runs folder is in "
                              "C:\\Users\\ada\\OneDrive\\Documents: Windows blocks python writing the runs there")
    assert f'-ControlledFolderAccessAllowedApplications "{PYTHON}"' in folders
    assert folders.endswith("or choose a runs folder outside C:\\Users\\ada\\OneDrive\\Documents")
    assert long_paths.startswith("long paths  off: a path of 260 characters or more fails") and "LongPathsEnabled" in long_paths
    assert sysmem.startswith("sysmem      NVIDIA driver 551.86 may move GPU memory to system RAM")
    assert "CUDA - Sysmem Fallback Policy > Prefer No Sysmem Fallback" in sysmem and PYTHON in sysmem
    assert timeout.startswith("TDR         a GPU kernel running past 2 s (TdrDelay, Windows' default) makes Windows "
                              "reset the driver")
    assert "-Name TdrDelay -Value 10" in timeout and "batch_size" in timeout
    assert section["tdr"]["delay_s"] == 2 and section["tdr"]["level"] == 3
    assert json.loads(json.dumps(section)) == section  # rlpanel doctor --json prints it as it is


def test_a_machine_set_for_the_night_says_so():
    ready = registry({(FILESYSTEM_KEY, None): True, (FILESYSTEM_KEY, "LongPathsEnabled"): 1,
                      (GRAPHICS_KEY, None): True, (GRAPHICS_KEY, "TdrDelay"): 60})
    runs = "c:\\users\\ada\\rlpanel-runs\\"  # the exclusion's folder, as another spelling
    section = windows_section(runs, "531.79", PYTHON, "win32", ready, powershell("admin_cfa_on.json"))
    assert [section[k]["ok"] for k in CHECKS] == [True, True, True, True, True]
    assert section["defender_exclusion"]["line"].endswith("excluded from Microsoft Defender's scan "
                                                          "(C:\\Users\\ada\\rlpanel-runs)")
    assert section["controlled_folder_access"]["line"] == ("protected   Controlled Folder Access is on; the runs folder "
                                                           "is not in a protected folder")
    assert section["tdr"]["line"].startswith("TDR         TdrDelay 60 s")
    assert "predates CUDA's fallback to system RAM" in section["sysmem_fallback"]["line"]


def test_what_cannot_be_read_is_unknown_with_the_fix():
    section = windows_section(RUNS_IN_DOCUMENTS, None, PYTHON, "win32", registry({}), powershell("non_admin.json"))
    assert [section[k]["ok"] for k in CHECKS] == [None, True, None, None, None]
    assert "Windows shows its exclusions to administrators only" in section["defender_exclusion"]["line"]
    assert section["defender_exclusion"]["fix"].endswith(f'Add-MpPreference -ExclusionPath "{RUNS_IN_DOCUMENTS}"')
    assert section["controlled_folder_access"]["line"].startswith("protected   Controlled Folder Access off")
    assert section["long_paths"]["line"].startswith("long paths  unknown")
    assert section["tdr"]["line"].startswith("TDR         unknown (HKLM\\SYSTEM\\CurrentControlSet\\Control\\"
                                             "GraphicsDrivers could not be read)")
    assert "the NVIDIA driver (version unknown)" in section["sysmem_fallback"]["line"]

    def hangs(cmd, **kw):
        import subprocess

        raise subprocess.TimeoutExpired(cmd, kw["timeout"])

    cut = windows_section(RUNS_IN_DOCUMENTS, None, PYTHON, "win32", DEFAULT_WINDOWS, hangs)
    assert cut["defender_exclusion"]["ok"] is None and "did not answer within 8 s" in cut["defender_exclusion"]["line"]
    assert cut["controlled_folder_access"]["ok"] is None


def test_an_allowed_python_or_an_audit_mode_blocks_nothing():
    from core.machine.windows_traps import folder_access

    mp = {"cfa_mode": 1, "protected_folders": ["C:\\Users\\ada\\OneDrive\\Documents"], "allowed_apps": [PYTHON.upper()]}
    assert folder_access(RUNS_IN_DOCUMENTS, mp, PYTHON)["ok"] is True
    hidden = folder_access(RUNS_IN_DOCUMENTS, {**mp, "allowed_apps": None}, PYTHON)
    assert hidden["ok"] is None and "unless it is allowed" in hidden["line"]
    audit = folder_access(RUNS_IN_DOCUMENTS, {**mp, "cfa_mode": 2}, PYTHON)
    assert audit["ok"] is True and audit["line"] == "protected   Controlled Folder Access audit mode: it blocks no write of a run"


def test_the_driver_version_says_whether_the_fallback_and_its_setting_exist():
    assert sysmem_fallback("536.23", PYTHON)["ok"] is True
    between = sysmem_fallback("537.58", PYTHON)
    assert between["ok"] is False and between["fix"].startswith("update the NVIDIA driver to 546.01 or later, then ")
    assert sysmem_fallback("546.01", PYTHON)["ok"] is None  # the setting exists; nothing lets rlpanel read it
    assert sysmem_fallback("n/a", PYTHON)["ok"] is None


def test_tdr_levels_and_a_set_delay():
    off = tdr({"delay_s": 2, "delay_set": False, "level": 0})
    assert off["ok"] is True and "detection off (TdrLevel 0)" in off["line"]
    short = tdr({"delay_s": 5, "delay_set": True, "level": 3})
    assert short["ok"] is False and "past 5 s (TdrDelay) makes" in short["line"]


def test_off_windows_the_section_has_every_key_and_no_line():
    section = windows_section("/home/ada/runs", "550.54", "/usr/bin/python3", "linux",
                              registry={}.get, run=lambda *a, **k: 1 / 0)  # neither is asked
    assert section == dict.fromkeys(CHECKS) and windows_lines(section) == []


def test_the_report_prints_the_lines_after_the_power_plan():
    windows = windows_section(RUNS_IN_DOCUMENTS, "551.86", PYTHON, "win32", DEFAULT_WINDOWS, powershell("admin_cfa_on.json"))
    text = format_report({"python": "3.11.7", "executable": PYTHON, "platform": "Windows-11", "user_folder": "U",
                          "runs_dir": RUNS_IN_DOCUMENTS, "disk_free_bytes": 2**40, "torch": {"error": "none here"},
                          "nvml": {"available": False, "reason": "no driver"}, "power": None, "windows_update": None,
                          "windows": windows})
    lines = text.splitlines()
    assert lines[-5:] == windows_lines(windows)
