"""Host figures through psutil: system CPU and memory, and a process tree's CPU and RSS."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, NamedTuple


class HostSample(NamedTuple):
    """Host figures: system CPU %, the process tree's CPU % (of one core) and RSS, system memory."""

    t: float
    cpu_pct: float | None
    process_cpu_pct: float | None
    process_rss_bytes: int | None
    system_memory_used_bytes: int | None
    system_memory_total_bytes: int | None


class HostSampler:
    """CPU % since the previous sample (None on the first) and memory of a process tree."""

    def __init__(self) -> None:
        self._cpu_last: tuple[float, float] | None = None
        self._procs: dict[int, Any] = {}

    def sample(self, pids: Iterable[int] | None = None) -> HostSample:
        import psutil

        t = time.time()
        times = psutil.cpu_times()
        idle = times.idle + getattr(times, "iowait", 0.0)
        total = sum(times)
        cpu_pct = None
        if self._cpu_last is not None and total > self._cpu_last[1]:
            busy = (total - idle) - (self._cpu_last[1] - self._cpu_last[0])
            cpu_pct = round(max(0.0, min(100.0, 100.0 * busy / (total - self._cpu_last[1]))), 1)
        self._cpu_last = (idle, total)
        rss, proc_cpu = self._tree(psutil, pids)
        vm = psutil.virtual_memory()
        return HostSample(t, cpu_pct, proc_cpu, rss, vm.total - vm.available, vm.total)

    def _tree(self, psutil: Any, pids: Iterable[int] | None) -> tuple[int | None, float | None]:
        if pids is None:
            return None, None
        wanted = set(pids)
        for gone in set(self._procs) - wanted:
            del self._procs[gone]
        rss, cpu, seen = 0, 0.0, 0
        for pid in wanted:
            try:
                proc = self._procs.get(pid)
                if proc is None:
                    proc = self._procs[pid] = psutil.Process(pid)
                with proc.oneshot():
                    rss += proc.memory_info().rss
                    cpu += proc.cpu_percent(None)
                seen += 1
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                self._procs.pop(pid, None)
        return (rss, round(cpu, 1)) if seen else (None, None)
