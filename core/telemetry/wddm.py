"""The run's GPU memory on Windows, from the counter "\\GPU Process Memory(*)\\Dedicated Usage".

Under Windows' default driver model (WDDM), and under WSL2, NVML lists a CUDA process without a
figure for its memory (``usedGpuMemory`` is NVML_VALUE_NOT_AVAILABLE; nvidia-smi prints [N/A]).
Windows keeps one: the dedicated GPU memory of each process on each adapter, the figure Task
Manager shows, read here through PDH (pdh.dll) with ctypes. Each process has one counter
instance per adapter it opened, named ``pid_<pid>_luid_<high>_<low>_phys_<n>``; a pid's figure
is the sum of its instances, the run's the sum over its pids.

The run's adapter: NVML gives no card's LUID, so the sampler sums the run's pids over every
adapter. A CUDA process holds its memory on the card it computes on; on another adapter the same
pid holds next to nothing (an integrated GPU has little or no dedicated memory; in a real capture
dwm's instance on the second adapter read 0 B). ``run_bytes(..., luid=...)`` keeps one adapter
where a caller knows it.

The counter counts what a process committed in the card's dedicated memory, not only what is
resident: a compositor can report more than the card holds (dwm: 8.8 GiB on a card using
0.94 GiB in that capture). The run's processes compute and allocate; their figure is read alone.

The query is opened on the first read, kept open and closed by ``close``. Any failure (no
pdh.dll, a Windows older than 1709 without these counters, a PDH error) reads as None, never an
exception into the telemetry thread, and the query is tried again after ``RETRY_S``.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

COUNTER_PATH = "\\GPU Process Memory(*)\\Dedicated Usage"  # English: PdhAddEnglishCounterW finds it on any locale
RETRY_S = 60.0  # after a failure (no such counter set, PDH refused): the next try; a tick is 0.2 s
REOPEN_S = 30.0  # a query that lists none of the run's pids is opened afresh at most this often (see run_bytes)
_INSTANCE = re.compile(r"^pid_(\d+)_luid_(0x[0-9a-f]+_0x[0-9a-f]+)_phys_(\d+)$", re.IGNORECASE)

Pairs = list[tuple[str, int]]  # (counter instance name, bytes) as PDH lists them


class CounterInstance(NamedTuple):
    """What a counter instance's name says: the process, the adapter's LUID (lower case), the physical GPU."""

    pid: int
    luid: str
    phys: int


def parse_instance(name: str) -> CounterInstance | None:
    """``pid_1234_luid_0x00000000_0x0000D1A3_phys_0`` -> (1234, "0x00000000_0x0000d1a3", 0); None for another name."""
    m = _INSTANCE.match(name.strip())
    return CounterInstance(int(m.group(1)), m.group(2).lower(), int(m.group(3))) if m else None


def bytes_per_pid(pairs: Iterable[tuple[str, float]], luid: str | None = None) -> dict[int, int]:
    """Dedicated bytes per pid, each pid's instances summed (several adapters, several physical GPUs).

    ``luid`` keeps one adapter's instances. A negative value (typeperf writes -1 once a process is
    gone) and a name that is not a process instance are left out."""
    want = luid.lower() if luid else None
    out: dict[int, int] = {}
    for name, value in pairs:
        inst = parse_instance(name)
        if inst is None or value < 0 or (want is not None and inst.luid != want):
            continue
        out[inst.pid] = out.get(inst.pid, 0) + int(value)
    return out


def run_bytes(pairs: Iterable[tuple[str, float]], pids: Iterable[int], luid: str | None = None) -> int | None:
    """The run's dedicated bytes: the sum over its ``pids`` that have an instance; None when none has one."""
    per_pid = bytes_per_pid(pairs, luid)
    mine = [per_pid[p] for p in set(pids) if p in per_pid]
    return sum(mine) if mine else None


class WddmMemory:
    """The run's dedicated GPU memory from a counter reader (``PdhReader`` on Windows; tests give recorded captures).

    ``read`` returns the counter's (instance, bytes) pairs, or None when it cannot; ``close`` (optional on the
    reader) ends its query. A query that lists none of the run's pids is closed and opened afresh at most
    every ``REOPEN_S``, in case PDH kept the instance list it had when the query was opened (before the run's
    CUDA context existed; a typeperf started before a process never sees it)."""

    def __init__(self, read: Callable[[], Pairs | None], luid: str | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.read = read
        self.luid = luid
        self.clock = clock
        self._missed_since: float | None = None

    def run_bytes(self, pids: set[int]) -> int | None:
        """The dedicated bytes of ``pids`` now, or None (no reading, or none of them listed)."""
        pairs = self.read()
        if pairs is None:
            return None
        value = run_bytes(pairs, pids, self.luid)
        now = self.clock()
        if value is not None:
            self._missed_since = None
        elif self._missed_since is None:
            self._missed_since = now
        elif now - self._missed_since >= REOPEN_S:
            self._missed_since = now
            self.close()  # the reader opens a new query on its next read
        return value

    def close(self) -> None:
        close = getattr(self.read, "close", None)
        if callable(close):
            close()


def platform_wddm(platform: str = sys.platform) -> WddmMemory | None:
    """The counter reader of this machine: on Windows, PDH's; elsewhere None (no such counters)."""
    return WddmMemory(PdhReader()) if platform == "win32" else None


# --- PDH through ctypes (Windows only; read, not run, on the Linux machines the tests run on) ---------

PDH_FMT_LARGE = 0x00000400
PDH_MORE_DATA = 0x800007D2
PDH_CSTATUS_VALID_DATA = 0x0
PDH_CSTATUS_NEW_DATA = 0x1


class PdhReader:
    """``\\GPU Process Memory(*)\\Dedicated Usage`` through pdh.dll: one query, opened on the first call."""

    def __init__(self) -> None:
        self._pdh: Any = None
        self._query: Any = None
        self._counter: Any = None
        self._failed_at: float | None = None
        self.reason: str | None = None  # why the last read failed (for a developer reading the object)

    def __call__(self) -> Pairs | None:
        if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_S:
            return None
        try:
            if self._query is None:
                self._open()
            pairs = self._read()
        except Exception as exc:  # ctypes, a missing DLL or a PDH status: the telemetry thread must go on
            self.reason = f"{type(exc).__name__}: {exc}"
            self._failed_at = time.monotonic()
            self.close()
            return None
        self._failed_at = self.reason = None
        return pairs

    def _open(self) -> None:
        import ctypes
        from ctypes import wintypes

        pdh = ctypes.WinDLL("pdh.dll")  # type: ignore[attr-defined,unused-ignore]  # Windows only
        handle = ctypes.c_void_p
        pdh.PdhOpenQueryW.argtypes = [ctypes.c_wchar_p, ctypes.c_size_t, ctypes.POINTER(handle)]
        pdh.PdhAddEnglishCounterW.argtypes = [handle, ctypes.c_wchar_p, ctypes.c_size_t, ctypes.POINTER(handle)]
        pdh.PdhCollectQueryData.argtypes = [handle]
        pdh.PdhGetFormattedCounterArrayW.argtypes = [handle, wintypes.DWORD, ctypes.POINTER(wintypes.DWORD),
                                                     ctypes.POINTER(wintypes.DWORD), ctypes.c_void_p]
        pdh.PdhCloseQuery.argtypes = [handle]
        for fn in (pdh.PdhOpenQueryW, pdh.PdhAddEnglishCounterW, pdh.PdhCollectQueryData,
                   pdh.PdhGetFormattedCounterArrayW, pdh.PdhCloseQuery):
            fn.restype = wintypes.DWORD  # PDH_STATUS, compared unsigned (PDH_MORE_DATA is 0x800007D2)
        query, counter = handle(), handle()
        _check(pdh.PdhOpenQueryW(None, 0, ctypes.byref(query)), "PdhOpenQueryW")
        self._pdh, self._query = pdh, query
        _check(pdh.PdhAddEnglishCounterW(query, COUNTER_PATH, 0, ctypes.byref(counter)), "PdhAddEnglishCounterW")
        self._counter = counter

    def _read(self) -> Pairs:
        import ctypes
        from ctypes import wintypes

        class Value(ctypes.Union):
            _fields_ = [("longValue", ctypes.c_long), ("doubleValue", ctypes.c_double),
                        ("largeValue", ctypes.c_longlong), ("AnsiStringValue", ctypes.c_char_p),
                        ("WideStringValue", ctypes.c_wchar_p)]

        class CounterValue(ctypes.Structure):  # PDH_FMT_COUNTERVALUE
            _fields_ = [("CStatus", wintypes.DWORD), ("value", Value)]

        class Item(ctypes.Structure):  # PDH_FMT_COUNTERVALUE_ITEM_W
            _fields_ = [("szName", ctypes.c_wchar_p), ("FmtValue", CounterValue)]

        pdh = self._pdh
        _check(pdh.PdhCollectQueryData(self._query), "PdhCollectQueryData")
        size, count = wintypes.DWORD(0), wintypes.DWORD(0)
        status = pdh.PdhGetFormattedCounterArrayW(self._counter, PDH_FMT_LARGE, ctypes.byref(size),
                                                  ctypes.byref(count), None)
        if status == 0:
            return []  # no process has an instance
        if status != PDH_MORE_DATA:
            _check(status, "PdhGetFormattedCounterArrayW")
        buffer = (ctypes.c_byte * size.value)()
        _check(pdh.PdhGetFormattedCounterArrayW(self._counter, PDH_FMT_LARGE, ctypes.byref(size),
                                                ctypes.byref(count), buffer), "PdhGetFormattedCounterArrayW")
        items = ctypes.cast(buffer, ctypes.POINTER(Item))
        return [(items[i].szName, int(items[i].FmtValue.value.largeValue)) for i in range(count.value)
                if items[i].FmtValue.CStatus in (PDH_CSTATUS_VALID_DATA, PDH_CSTATUS_NEW_DATA) and items[i].szName]

    def close(self) -> None:
        """End the query (the next call opens a new one)."""
        if self._pdh is not None and self._query is not None:
            try:
                self._pdh.PdhCloseQuery(self._query)
            except Exception:  # closing must not raise either: the query is dropped all the same
                pass
        self._query = self._counter = None


def _check(status: int, call: str) -> None:
    if status != 0:
        raise OSError(f"{call} returned PDH status 0x{status & 0xFFFFFFFF:08X}")
