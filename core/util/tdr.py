"""Windows' GPU timeout (TDR, timeout detection and recovery): how long one GPU kernel may run before Windows resets
the display driver, which ends a CUDA process's work ("CUDA error: unspecified launch failure").

``HKLM\\SYSTEM\\CurrentControlSet\\Control\\GraphicsDrivers`` ``TdrDelay`` (seconds; absent: 2, Windows' default) and
``TdrLevel`` (0: detection off, 1: bug check, 3, the default: recover), as Microsoft's "TDR registry keys" page
documents them. Read through ``core.util.registry``; tests pass recorded values.
"""

from __future__ import annotations

import sys
from typing import Any

from core.util.registry import Registry, winreg_reader

GRAPHICS_KEY = r"SYSTEM\CurrentControlSet\Control\GraphicsDrivers"
DEFAULT_DELAY_S = 2
ADVISED_DELAY_S = 10
TDR_LEVELS = {0: "off", 1: "bug check", 2: "recover to VGA", 3: "recover"}
FIX = (f"set TdrDelay to {ADVISED_DELAY_S} or more: in an administrator PowerShell, New-ItemProperty -Path "
       "'HKLM:\\SYSTEM\\CurrentControlSet\\Control\\GraphicsDrivers' -Name TdrDelay -Value 10 -PropertyType DWORD -Force, "
       "then restart Windows; within a run, a smaller batch (batch_size) shortens each GPU kernel")


def read_tdr(registry: Registry | None = None, platform: str = sys.platform) -> dict[str, Any] | None:
    """``{"delay_s", "delay_set", "level"}`` (``delay_set``: False where Windows' default applies); None off Windows;
    ``{"error": ...}`` where the key cannot be read."""
    if not platform.startswith("win"):
        return None
    read = registry or winreg_reader
    if read(GRAPHICS_KEY, None) is None:
        return {"error": f"HKLM\\{GRAPHICS_KEY} could not be read"}
    delay, level = read(GRAPHICS_KEY, "TdrDelay"), read(GRAPHICS_KEY, "TdrLevel")
    return {"delay_s": delay if isinstance(delay, int) else DEFAULT_DELAY_S, "delay_set": isinstance(delay, int),
            "level": level if isinstance(level, int) else 3}
