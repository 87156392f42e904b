"""Keep the machine awake while a run trains (``runtime.keep_awake``), per platform.

- Windows: ``SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED)`` through ctypes from
  the training thread; ``ES_CONTINUOUS`` alone releases it (and Windows releases it when the
  process ends).
- Linux: ``systemd-inhibit --what=sleep:idle ... tail --pid=WORKER -f /dev/null`` where present:
  the inhibitor ends with the worker even when the worker is killed.
- macOS: ``caffeinate -i -w WORKER``, which ends with the worker too.

Nothing here raises: a machine that cannot be kept awake trains anyway, and ``KeepAwake.note``
says why and what it means (the machine may sleep), for the run's event log; the worker warns once
per run and failure, not on each attempt (``core.worker.session``). The lid-close action is not covered by any of these: only
the power plan decides it (``core.util.powercfg`` reads it on Windows).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

ES_CONTINUOUS = 0x80000000
ES_SYSTEM_REQUIRED = 0x00000001
INHIBITOR_START_S = 1.0  # an inhibitor that has not failed by then holds its lock
SLEEP_RISK = ("the machine may go to sleep during the run, which pauses the training until it wakes; to prevent it, "
              "turn off automatic sleep in the system's power settings while it trains")


def cannot(detail: str) -> str:
    """The warning of a machine that cannot be kept awake: what failed, and what it means for the run."""
    return f"could not keep the machine awake ({detail}): {SLEEP_RISK}"


def inhibitor_command(platform: str, pid: int, why: str, which: Any = shutil.which) -> list[str] | None:
    """The command that keeps ``platform`` awake while ``pid`` lives (None: no such tool here)."""
    if platform == "darwin":
        tool = which("caffeinate")
        return [tool, "-i", "-w", str(pid)] if tool else None
    tool, tail = which("systemd-inhibit"), which("tail")
    if not (tool and tail):
        return None
    return [tool, "--what=sleep:idle", "--who=rlpanel", f"--why={why}", "--mode=block",
            tail, f"--pid={pid}", "-f", "/dev/null"]


class KeepAwake:
    """``with KeepAwake(why):`` the OS does not sleep on its own while the block runs."""

    def __init__(self, why: str, enabled: bool = True, platform: str = sys.platform,
                 kernel32: Any = None, which: Any = shutil.which):
        self.why, self.enabled, self.platform = why, enabled, platform
        self._kernel32, self._which = kernel32, which
        self._proc: subprocess.Popen[bytes] | None = None
        self.active = False
        self.note = "keep awake is off (runtime.keep_awake): the machine may sleep during the run" if not enabled else ""

    def __enter__(self) -> KeepAwake:
        return self.start()

    def start(self) -> KeepAwake:
        """Ask the OS; ``active`` and ``note`` say how that went."""
        if self.enabled:
            try:
                self._start()
            except OSError as exc:
                self.note = cannot(str(exc))
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _start(self) -> None:
        if self.platform.startswith("win"):
            kernel32 = self._kernel32 or _windows_kernel32()
            if kernel32.SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED) == 0:
                self.note = cannot("SetThreadExecutionState failed")
                return
            self._kernel32, self.active = kernel32, True
            self.note = "keeping the machine awake while the run trains (SetThreadExecutionState)"
            return
        cmd = inhibitor_command(self.platform, os.getpid(), self.why, self._which)
        if cmd is None:
            tool = "caffeinate" if self.platform == "darwin" else "systemd-inhibit"
            self.note = cannot(f"{tool} is not installed")
            return
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            proc.wait(timeout=INHIBITOR_START_S)
        except subprocess.TimeoutExpired:  # still holding: it works
            self._proc, self.active = proc, True
            self.note = f"keeping the machine awake while the run trains ({os.path.basename(cmd[0])})"
            return
        err = (proc.stderr.read().decode(errors="replace").strip().splitlines() or [f"exit {proc.returncode}"])[-1] \
            if proc.stderr else f"exit {proc.returncode}"
        self.note = cannot(f"{os.path.basename(cmd[0])}: {err}")

    def release(self) -> None:
        if not self.active:
            return
        self.active = False
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._proc = None
        elif self._kernel32 is not None:
            self._kernel32.SetThreadExecutionState(ES_CONTINUOUS)


def _windows_kernel32() -> Any:
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    kernel32.SetThreadExecutionState.restype = ctypes.c_uint32
    kernel32.SetThreadExecutionState.argtypes = [ctypes.c_uint32]
    return kernel32
