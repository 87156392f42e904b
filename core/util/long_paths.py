"""Windows' 260-character path limit: whether long paths are on (``LongPathsEnabled``), and the fix.

Without ``HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem`` ``LongPathsEnabled`` = 1 (and a Python that
declares itself long-path aware, as python.org's 3.6+ does), a path of 260 characters or more fails with a
misleading ``FileNotFoundError``. ``rlpanel doctor`` says whether it is on; a launch refuses a runs folder whose
deepest path would pass the limit.
"""

from __future__ import annotations

import sys

from core.util.registry import Registry, winreg_reader

MAX_PATH = 260  # Windows' MAX_PATH, the terminating NUL included: a usable path is at most 259 characters
FILESYSTEM_KEY = r"SYSTEM\CurrentControlSet\Control\FileSystem"
FIX = ("turn on long paths: in an administrator PowerShell, New-ItemProperty -Path "
       "'HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem' -Name LongPathsEnabled -Value 1 -PropertyType DWORD "
       "-Force (or Group Policy: Enable Win32 long paths), then restart rlpanel; or choose a shorter runs folder")


def long_paths_enabled(registry: Registry | None = None, platform: str = sys.platform) -> bool | None:
    """True or False on Windows (absent reads as off, Windows' default); None off Windows or where unreadable."""
    if not platform.startswith("win"):
        return None
    read = registry or winreg_reader
    if read(FILESYSTEM_KEY, None) is None:
        return None  # the key itself unreadable: unknown
    value = read(FILESYSTEM_KEY, "LongPathsEnabled")
    return value == 1 if isinstance(value, int) else False if value is None else None
