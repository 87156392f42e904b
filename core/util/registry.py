"""The Windows registry, read only, through one small function (``Registry``): ``core.util.winupdate``,
``core.util.long_paths`` and the doctor's Windows checks read it; tests pass recorded values instead of ``winreg``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

# (key under HKLM, value name) -> the value, or None when absent; (key, None) -> True when the key exists, else None
Registry = Callable[[str, "str | None"], Any]


def winreg_reader(key: str, name: str | None) -> Any:
    """The real registry (HKEY_LOCAL_MACHINE, read only); None for what is absent or unreadable."""
    if sys.platform != "win32":  # mypy reads winreg's stubs for this platform only
        return None
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, key) as handle:
            return True if name is None else winreg.QueryValueEx(handle, name)[0]
    except OSError:  # FileNotFoundError: absent; PermissionError: a locked-down key reads as unknown
        return None
