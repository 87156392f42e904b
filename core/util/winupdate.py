"""Windows Update and a night of training: the active hours, and whether a restart is pending.

Windows Update restarts a machine to finish installing updates outside its *active hours* (at most 18 h a
day, ``HKLM\\SOFTWARE\\Microsoft\\WindowsUpdate\\UX\\Settings`` ``ActiveHoursStart``/``ActiveHoursEnd``, whole
hours), so a night of training can end in a restart. A restart is pending while
``...\\WindowsUpdate\\Auto Update\\RebootRequired`` or ``...\\Component Based Servicing\\RebootPending`` exist.
``rlpanel doctor`` and the System tab show what this says, with the fix: ``rlpanel queue run
--survive-reboot``. The registry is read through ``core.util.registry``; tests pass recorded values.
"""

from __future__ import annotations

import sys
from typing import Any

from core.util.registry import Registry, winreg_reader

ACTIVE_HOURS_KEY = r"SOFTWARE\Microsoft\WindowsUpdate\UX\Settings"
REBOOT_KEYS = (r"SOFTWARE\Microsoft\Windows\CurrentVersion\WindowsUpdate\Auto Update\RebootRequired",
               r"SOFTWARE\Microsoft\Windows\CurrentVersion\Component Based Servicing\RebootPending")
NIGHT_HOURS = frozenset((22, 23, 0, 1, 2, 3, 4, 5))  # 22:00-06:00: the hours a queue usually runs unattended
ADVICE = "use rlpanel queue run --survive-reboot (or tick Resume after a restart in the Queue tab)"


def read_windows_update(registry: Registry | None = None, platform: str = sys.platform) -> dict[str, Any] | None:
    """``{"active_hours": [start, end] | None, "restart_pending": bool}``; None off Windows."""
    if not platform.startswith("win"):
        return None
    read = registry or winreg_reader
    start, end = read(ACTIVE_HOURS_KEY, "ActiveHoursStart"), read(ACTIVE_HOURS_KEY, "ActiveHoursEnd")
    hours = [start, end] if all(isinstance(h, int) and 0 <= h <= 23 for h in (start, end)) else None
    return {"active_hours": hours, "restart_pending": any(read(key, None) for key in REBOOT_KEYS)}


def restart_hours(start: int, end: int) -> list[int]:
    """The hours outside the active hours ``start``-``end`` (it may wrap past midnight): when Windows may restart."""
    active = {(start + i) % 24 for i in range((end - start) % 24 or 24)}
    return [h for h in range(24) if h not in active]


def windows_update_lines(data: dict[str, Any] | None) -> list[str]:
    """The report's lines (none off Windows)."""
    if data is None:
        return []
    lines = []
    hours = data.get("active_hours")
    if hours:
        start, end = hours
        lines.append(f"updates     active hours {start:02d}:00-{end:02d}:00: Windows may restart this machine "
                     f"between {end:02d}:00 and {start:02d}:00 to finish installing updates")
        if NIGHT_HOURS & set(restart_hours(start, end)):
            lines.append(f"ADVICE      a queue running between {end:02d}:00 and {start:02d}:00 may meet a restart: {ADVICE}")
    else:
        lines.append("updates     active hours unknown (Windows may set them from your use): a restart may come at night")
        lines.append(f"ADVICE      for a queue over the night: {ADVICE}")
    if data.get("restart_pending"):
        lines.append("WARNING     Windows Update has a restart pending: restart before a long night, or it may come "
                     "during the night")
    return lines
