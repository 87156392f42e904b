"""Windows power throttling (EcoQoS, "efficiency mode"): a training process opts out of it.

Windows runs what it takes for background work (a process with no window, as a detached worker and its env
processes are) at lower clock speeds on efficient cores, always on battery: a night's training slows several
times with nothing said. A process may decline it for itself: ``SetProcessInformation(GetCurrentProcess(),
ProcessPowerThrottling, PROCESS_POWER_THROTTLING_STATE{Version=1, ControlMask=EXECUTION_SPEED, StateMask=0})``
("ControlMask selects the mechanism and StateMask is set to zero as mechanisms should be turned off":
Microsoft's SetProcessInformation page, its example; the constants from processthreadsapi.h). Windows 11 also
ignores the timer-resolution requests of a process it deems hidden (``IGNORE_TIMER_RESOLUTION``); that bit is
declined too where Windows knows it, and on a Windows that refuses it (10) the call is made again without it.

The worker calls ``opt_out`` first thing and prints what happened to ``worker.log``; the lean env processes call
it too. Off Windows it does nothing; a failure never stops a run.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

PROCESS_POWER_THROTTLING = 4  # PROCESS_INFORMATION_CLASS ProcessPowerThrottling
PROCESS_POWER_THROTTLING_CURRENT_VERSION = 1
PROCESS_POWER_THROTTLING_EXECUTION_SPEED = 0x1
PROCESS_POWER_THROTTLING_IGNORE_TIMER_RESOLUTION = 0x4  # Windows 11 and later
SLOWED = "Windows may slow this run while it trains in the background or on battery"


class ThrottlingState(ctypes.Structure):
    """PROCESS_POWER_THROTTLING_STATE: three ULONGs (32 bits on Windows; ``c_ulong`` is 64 elsewhere)."""

    _fields_ = [("Version", ctypes.c_uint32), ("ControlMask", ctypes.c_uint32), ("StateMask", ctypes.c_uint32)]


def opt_out(platform: str = sys.platform, kernel32: Any = None) -> str | None:
    """Take this process out of Windows' power throttling; what happened, in a line (None off Windows)."""
    if not platform.startswith("win"):
        return None
    try:
        kernel32 = kernel32 or _windows_kernel32()
        for mask in (PROCESS_POWER_THROTTLING_EXECUTION_SPEED | PROCESS_POWER_THROTTLING_IGNORE_TIMER_RESOLUTION,
                     PROCESS_POWER_THROTTLING_EXECUTION_SPEED):
            state = ThrottlingState(PROCESS_POWER_THROTTLING_CURRENT_VERSION, mask, 0)
            if kernel32.SetProcessInformation(kernel32.GetCurrentProcess(), PROCESS_POWER_THROTTLING,
                                              ctypes.pointer(state), ctypes.sizeof(state)):
                return ("Windows power throttling (EcoQoS) is off for this process: Windows does not slow it as background "
                        "work")
        code = _last_error()
        detail = f"SetProcessInformation failed, Windows error {code}" if code else "SetProcessInformation failed"
    except (OSError, AttributeError) as exc:  # AttributeError: a kernel32 without SetProcessInformation (before Windows 8)
        detail = f"SetProcessInformation could not be called: {exc}"
    return f"could not opt out of Windows power throttling ({detail}): {SLOWED}"


def _last_error() -> int:
    get = getattr(ctypes, "get_last_error", None)  # Windows only
    return int(get()) if get else 0


def _windows_kernel32() -> Any:
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    kernel32.GetCurrentProcess.argtypes = []
    kernel32.SetProcessInformation.restype = wintypes.BOOL
    kernel32.SetProcessInformation.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.POINTER(ThrottlingState),
                                               wintypes.DWORD]
    return kernel32
