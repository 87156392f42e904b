"""What powers the machine (battery or mains) and, on Windows, its power mode: what a night of training runs on.

A run on battery drains it and, on Windows, runs throttled; the power mode (Settings > System > Power & battery >
Power mode, the "overlay" scheme) biases the CPU and power throttling: in *Best power efficiency* Windows slows
what it deems background work hardest. The mode in force is per power source, in
``HKLM\\SYSTEM\\CurrentControlSet\\Control\\Power\\User\\PowerSchemes`` ``ActiveOverlayAcPowerScheme`` /
``ActiveOverlayDcPowerScheme``; its GUIDs are powrprof.h's ``GUID_POWER_MODE_*`` (Microsoft's
PowerGetUserConfiguredACPowerMode page; all zeros, or absent, is Balanced; Windows 10's slider wrote the Balanced
plan's own GUID for it). The battery comes from psutil, on any system. ``rlpanel doctor`` and the System tab show
this, with a warning for a night on battery or in efficiency mode.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from core.util.registry import Registry, winreg_reader

SCHEMES_KEY = r"SYSTEM\CurrentControlSet\Control\Power\User\PowerSchemes"
BEST_EFFICIENCY = "961cc777-2547-4f9d-8174-7d86181b8a7a"
POWER_MODES = {
    BEST_EFFICIENCY: "Best power efficiency",
    "00000000-0000-0000-0000-000000000000": "Balanced",
    "381b4222-f694-41f0-9685-ff5bb260df2e": "Balanced",  # Windows 10's slider: the Balanced plan's GUID
    "ded574b5-45a0-4f42-8737-46345c09c238": "Best performance",
}
MODE_FIX = "set Settings > System > Power & battery > Power mode to Best performance (or Balanced)"


def _battery() -> Any:
    import psutil

    return psutil.sensors_battery()


def power_mode(value: Any) -> str:
    """A mode's name from its registry value: absent is Balanced (Windows' default); a GUID not known here is named."""
    if value is None:
        return "Balanced"
    guid = str(value).strip().strip("{}").lower()
    return POWER_MODES.get(guid, f"unknown ({value})")


def read_power_source(platform: str = sys.platform, battery: Callable[[], Any] = _battery,
                      registry: Registry | None = None) -> dict[str, Any]:
    """``{"windows", "has_battery", "on_battery", "battery_percent", "power_mode", "warnings"}``: ``on_battery`` None
    where there is no battery (or it cannot be read), ``power_mode`` (the one in force now) None off Windows or where
    unreadable."""
    note: str | None = None
    try:
        state = battery()
    except (OSError, RuntimeError, AttributeError) as exc:  # psutil's sensors vary by system; a failure reads as unknown
        state, note = None, f"the battery could not be read: {exc}"
    on_battery = None if state is None or state.power_plugged is None else not state.power_plugged
    percent = None if state is None else round(float(state.percent))
    mode = None
    if platform.startswith("win"):
        read = registry or winreg_reader
        if read(SCHEMES_KEY, None) is not None:
            name = "ActiveOverlayDcPowerScheme" if on_battery else "ActiveOverlayAcPowerScheme"
            mode = power_mode(read(SCHEMES_KEY, name))
    out: dict[str, Any] = {"windows": platform.startswith("win"), "has_battery": state is not None,
                           "on_battery": on_battery, "battery_percent": percent, "power_mode": mode,
                           "warnings": overnight_warnings(on_battery, percent, mode)}
    if note:
        out["note"] = note
    return out


def overnight_warnings(on_battery: bool | None, percent: int | None, mode: str | None) -> list[str]:
    """What would slow or end a night's training: the battery, the efficiency mode; each with the fix."""
    out = []
    if on_battery:
        out.append(f"this machine runs on battery ({percent} %): a night of training drains it, and Windows slows a run "
                   "on battery: plug in the charger before a long run")
    if mode == POWER_MODES[BEST_EFFICIENCY]:
        source = "on battery" if on_battery else "plugged in"
        out.append(f"the power mode ({source}) is Best power efficiency: Windows runs the CPU slower and throttles "
                   f"background work hardest: {MODE_FIX}")
    return out


def power_source_lines(data: dict[str, Any] | None) -> list[str]:
    """The report's lines: on Windows always; elsewhere only where there is a battery."""
    windows = bool(data and data.get("windows"))
    if data is None or (not windows and not data.get("has_battery")):
        return []
    if not data.get("has_battery"):
        source = data.get("note") or "no battery (mains power)"
    elif data.get("on_battery") is None:
        source = f"battery {data.get('battery_percent')} %, charger state unknown"
    else:
        plugged = "on battery" if data["on_battery"] else "plugged in"
        source = f"{plugged}, battery {data.get('battery_percent')} %"
    mode = data.get("power_mode")
    mode_text = f"; power mode {mode}" if mode else "; power mode unknown" if windows else ""
    return [f"power       {source}{mode_text}"] + [f"WARNING     {w}" for w in data.get("warnings") or []]
