"""The doctor's Windows checks: the traps a Windows laptop sets for a night of training, each a line with its fix.

Defender scanning the runs folder and Controlled Folder Access (``core.util.defender``, one PowerShell call), long
paths (``core.util.long_paths``), the NVIDIA driver's fallback to system RAM (a driver setting no documented place
lets a program read: the driver's version says whether it exists), and the GPU timeout (``core.util.tdr``).
``rlpanel doctor --json`` has them under ``windows``: every check's key always, each ``None`` off Windows, else
``{"ok": True | False | None (unknown), ..., "line", "fix"}``; ``rlpanel doctor`` and the System tab print the lines.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from core.util.defender import CFA_MODES, excluded_by, is_under, protected_by, read_defender
from core.util.long_paths import FIX as LONG_PATHS_FIX
from core.util.long_paths import long_paths_enabled
from core.util.registry import Registry
from core.util.tdr import ADVISED_DELAY_S, read_tdr
from core.util.tdr import FIX as TDR_FIX

CHECKS = ("defender_exclusion", "controlled_folder_access", "long_paths", "sysmem_fallback", "tdr")
FALLBACK_DRIVER = (536, 40)  # from this driver on, CUDA out of GPU memory spills to system RAM on Windows
FALLBACK_SETTING_DRIVER = (546, 1)  # ... and from this one the setting that stops it exists (NVIDIA's article 5490)


def check(ok: bool | None, label: str, text: str, fix: str | None = None, **facts: Any) -> dict[str, Any]:
    """One check: ``ok`` (None: unknown), its facts, the report's line and the fix."""
    return {"ok": ok, **facts, "line": f"{label:<12}{text}", "fix": fix}


def windows_section(runs: str, driver_version: str | None, python_exe: str, platform: str = sys.platform,
                    registry: Registry | None = None, run: Any = subprocess.run) -> dict[str, dict[str, Any] | None]:
    """Every check (``CHECKS``) for the runs folder ``runs`` (absolute); all None off Windows. ``python_exe``: the
    interpreter that writes the runs (a venv's python.exe starts its base interpreter, which is what Windows sees)."""
    if not platform.startswith("win"):
        return dict.fromkeys(CHECKS)
    mp = read_defender(platform, run) or {}
    return {"defender_exclusion": defender_exclusion(runs, mp), "controlled_folder_access": folder_access(runs, mp, python_exe),
            "long_paths": long_paths(long_paths_enabled(registry, platform)),
            "sysmem_fallback": sysmem_fallback(driver_version, python_exe), "tdr": tdr(read_tdr(registry, platform))}


def windows_lines(section: dict[str, dict[str, Any] | None] | None) -> list[str]:
    """The report's lines (none off Windows)."""
    return [c["line"] for c in (section or {}).values() if c]


def defender_exclusion(runs: str, mp: dict[str, Any]) -> dict[str, Any]:
    fix = f'in an administrator PowerShell: Add-MpPreference -ExclusionPath "{runs}"'
    if "error" in mp:
        return check(None, "defender", f"unknown whether Microsoft Defender scans the runs folder: {mp['error']}; "
                                       f"to exclude it, {fix}", fix)
    if mp.get("exclusions") is None:
        return check(None, "defender", "unknown whether the runs folder is excluded from Microsoft Defender's scan "
                                       f"(Windows shows its exclusions to administrators only); to exclude it, {fix}", fix)
    match = excluded_by(runs, mp["exclusions"])
    if match:
        return check(True, "defender", f"the runs folder is excluded from Microsoft Defender's scan ({match})",
                     exclusion=match)
    return check(False, "defender", "Microsoft Defender scans every checkpoint written to the runs folder (it is not "
                                    f"excluded), which slows saving and can hold a file a run replaces; to exclude it, {fix}",
                 fix)


def folder_access(runs: str, mp: dict[str, Any], python_exe: str) -> dict[str, Any]:
    mode = mp.get("cfa_mode")
    if "error" in mp or mode is None:
        why = "Get-MpPreference could not be read (see the line above)" if "error" in mp else "no value in Get-MpPreference"
        return check(None, "protected", f"Controlled Folder Access unknown: {why}", mode=None)
    if mode != 1:
        state = CFA_MODES.get(mode, f"in mode {mode}")
        return check(True, "protected", f"Controlled Folder Access {state}: it blocks no write of a run", mode=mode)
    folder = protected_by(runs, mp.get("protected_folders") or [])
    if folder is None:
        return check(True, "protected", "Controlled Folder Access is on; the runs folder is not in a protected folder",
                     mode=mode)
    allowed = mp.get("allowed_apps")
    if allowed is not None and any(is_under(python_exe, app) for app in allowed):
        return check(True, "protected", f"Controlled Folder Access is on and the runs folder is in {folder}; "
                                        f"{python_exe} is allowed through", mode=mode, protected_folder=folder)
    fix = (f"allow {python_exe}: Windows Security > Virus & threat protection > Ransomware protection > Allow an app "
           "through Controlled folder access (or, in an administrator PowerShell, Add-MpPreference "
           f'-ControlledFolderAccessAllowedApplications "{python_exe}"), or choose a runs folder outside {folder}')
    maybe = "unless it is allowed (Windows shows the allowed apps to administrators only)" if allowed is None else \
        "(it is not among the allowed apps)"
    return check(None if allowed is None else False, "protected",
                 f"Controlled Folder Access is on and the runs folder is in {folder}: Windows blocks python writing "
                 f"the runs there {maybe}; {fix}", fix, mode=mode, protected_folder=folder)


def long_paths(enabled: bool | None) -> dict[str, Any]:
    if enabled:
        return check(True, "long paths", "on (LongPathsEnabled): paths of 260 characters or more work", enabled=True)
    if enabled is None:
        return check(None, "long paths", f"unknown (the FileSystem key could not be read); {LONG_PATHS_FIX}",
                     LONG_PATHS_FIX, enabled=None)
    return check(False, "long paths", "off: a path of 260 characters or more fails with a misleading 'file not found'; "
                                      f"{LONG_PATHS_FIX}", LONG_PATHS_FIX, enabled=False)


def _driver(version: str | None) -> tuple[int, int] | None:
    try:
        major, minor = (version or "").split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return None


def sysmem_fallback(driver_version: str | None, python_exe: str) -> dict[str, Any]:
    fix = (f"NVIDIA Control Panel > Manage 3D settings > Program Settings > add {python_exe} (or Global Settings) > "
           "CUDA - Sysmem Fallback Policy > Prefer No Sysmem Fallback")
    driver = _driver(driver_version)
    if driver is not None and driver < FALLBACK_DRIVER:
        return check(True, "sysmem", f"NVIDIA driver {driver_version} predates CUDA's fallback to system RAM (536.40): "
                                     "a run out of GPU memory fails at once", setting=None)
    if driver is not None and driver < FALLBACK_SETTING_DRIVER:
        fix = f"update the NVIDIA driver to 546.01 or later, then {fix}"
        return check(False, "sysmem", f"NVIDIA driver {driver_version} moves GPU memory to system RAM when it runs out "
                                      f"(the run crawls instead of failing) and has no setting to stop it: {fix}",
                     fix, setting=None)
    which = f"NVIDIA driver {driver_version}" if driver else "the NVIDIA driver (version unknown)"
    return check(None, "sysmem", f"{which} may move GPU memory to system RAM when it runs out, so a run crawls instead "
                                 "of failing; the setting lives in the driver's profiles, which rlpanel cannot read: "
                                 f"to make it fail instead, {fix}", fix, setting=None)


def tdr(data: dict[str, Any] | None) -> dict[str, Any] | None:
    if data is None:
        return None
    if "error" in data:
        return check(None, "TDR", f"unknown ({data['error']}): a GPU kernel running past Windows' timeout (2 s by "
                                  f"default) resets the driver and ends the run's attempt; {TDR_FIX}", TDR_FIX)
    facts = {"delay_s": data["delay_s"], "level": data["level"]}
    if data["level"] == 0:
        return check(True, "TDR", "detection off (TdrLevel 0): Windows never resets the driver for a long GPU kernel "
                                  "(a hung GPU freezes the display instead)", **facts)
    if data["delay_s"] < ADVISED_DELAY_S:
        default = ", Windows' default" if not data["delay_set"] else ""
        return check(False, "TDR", f"a GPU kernel running past {data['delay_s']} s (TdrDelay{default}) makes Windows reset "
                                   "the driver and ends the run's attempt ('CUDA error: unspecified launch failure'); "
                                   f"{TDR_FIX}", TDR_FIX, **facts)
    return check(True, "TDR", f"TdrDelay {data['delay_s']} s: a GPU kernel may run that long before Windows resets "
                              "the driver", **facts)
