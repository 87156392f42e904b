"""Host figures through psutil: system CPU and memory, and a process tree's CPU, RSS and own memory.

A run's host memory is the sum of each of its processes' own memory (``own_memory``): PSS on Linux
(a page shared by n processes counts 1/n in each), USS where the OS has no PSS (macOS), private
bytes on Windows, RSS only where those are refused. The sum of RSS counts every shared page once
per process: python, numpy and gymnasium, which the forkserver's env processes share, read 3,254 MiB
for a run of 32 env processes on an H100 machine whose own memory was about half of that. The tune's
probes (``core.worker.throughput_probe``) read the same function.

Own memory costs more than RSS: Linux reads it from the kernel's page lists (``/proc/PID/smaps_rollup``),
~1 ms of CPU for an env process and ~5 ms for a worker with torch loaded: 37-44 ms for a tree of 33,
9-11x the RSS and CPU % reads of the same tree (``bench/telemetry_cost.py`` on a 2-core machine: 18-22 %
of a core at 5 Hz, 3.7-4.4 % at 1 Hz). ``HostMemoryReader`` therefore reads it at most once a second and
no more often than keeps it under 1 % of one core (every 4-8 s for those 33 processes), sooner when
the RSS sum rises past its last peak, and every 10 s only while the RSS sum stays within 1 % of the last
read's (a steady run: the read would say the same); RSS and CPU stay at the recorder's rate.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

# best first: the one a tree is labelled with is the least exact any of its processes was read with
MEASURES = ("pss", "uss", "private", "rss")
MEASURE_NAMES = {"pss": "PSS", "uss": "USS", "private": "private bytes", "rss": "RSS sum"}
MEASURE_WORDS = {
    "pss": "PSS: each process's own pages, a page shared by several processes split between them",
    "uss": "USS: the pages no other process shares",
    "private": "private bytes: the memory each process committed for itself (Windows)",
    "rss": "RSS sum: pages the run's processes share counted once per process (more than the run holds)",
}
OWN_MEMORY_MIN_PERIOD_S = 1.0
OWN_MEMORY_CPU_SHARE = 0.01  # of one core: reading own memory costs at most this
OWN_MEMORY_STEADY_PERIOD_S = 10.0  # while the RSS sum holds still, own memory is read this often


class HostMemory(NamedTuple):
    """Memory held by a set of processes and the measure it was read with (one of ``MEASURES``)."""

    memory_bytes: int
    measure: str


def measure_name(measure: Any) -> str:
    """``PSS``, ``RSS sum``, ...: a measure's short name; an unknown one as it is."""
    return MEASURE_NAMES.get(measure, str(measure)) if isinstance(measure, str) else "unknown measure"


def process_own_memory(proc: Any, platform: str = sys.platform) -> HostMemory:
    """One process's own memory: private bytes on Windows (``memory_info().private``, as cheap as RSS), else PSS
    (Linux) or USS from ``memory_full_info()``; its RSS where the OS refuses those (another user's process).
    Raises psutil's NoSuchProcess or AccessDenied when even RSS cannot be read."""
    import psutil

    if platform == "win32":
        info = proc.memory_info()
        private = getattr(info, "private", None)
        return HostMemory(int(private), "private") if private is not None else HostMemory(int(info.rss), "rss")
    try:
        full = proc.memory_full_info()
    except psutil.AccessDenied:
        return HostMemory(int(proc.memory_info().rss), "rss")
    for measure in ("pss", "uss"):
        value = getattr(full, measure, None)
        if value is not None:
            return HostMemory(int(value), measure)
    return HostMemory(int(full.rss), "rss")


def own_memory(procs: Iterable[Any], platform: str = sys.platform) -> HostMemory | None:
    """The host memory a set of psutil processes holds: each one's own memory (``process_own_memory``) summed,
    labelled with the least exact measure any of them was read with. None when none could be read (all gone)."""
    import psutil

    total, worst = 0, -1
    for proc in procs:
        try:
            value, measure = process_own_memory(proc, platform)
        except (psutil.NoSuchProcess, psutil.AccessDenied):  # ended between the listing and the reading
            continue
        total += value
        worst = max(worst, MEASURES.index(measure))
    return HostMemory(total, MEASURES[worst]) if worst >= 0 else None


class HostMemoryReader:
    """``own_memory`` paced by its cost: after a read that took c seconds of CPU, not again for c / ``cpu_share``
    seconds (at least ``min_period_s``), unless the tree's RSS sum (read every tick, cheap) has grown
    ``RSS_RISE`` past what it was at the highest read so far: a peak is read when it comes, not seconds after it
    has gone. A read its cost allows waits while the RSS sum stays within ``RSS_STEADY`` of the sum at the last
    read (a read would say what the last one said), ``steady_period_s`` at most. ``now`` is a monotonic time;
    ``cpu_clock`` the reading thread's CPU time (injected by tests); a caller that passes no RSS sum gets the
    cost's pace.

    Why steady reads wait: a lone worker with torch loaded takes 6-13 ms of CPU a read (its page tables), so the
    cost's pace alone was a read every 1-1.3 s, 1 % of a core, more than half the telemetry thread's CPU: 13-14 ms
    a second at 5 Hz against 6-7 with this rule (torch, SB3 and TensorBoard loaded, 2 loaded cores, 3 interleaved
    pairs), 0.7-1.1 % of the worker's CPU per env step at 800-1,300 steps/s (PPO CartPole, 8 dummy envs;
    ``bench/overhead.py``). Training holds its RSS within 0.1 % for minutes, so a steady run reads every
    ``steady_period_s``: ~0.1 % of a core."""

    RSS_RISE = 0.02
    RSS_STEADY = 0.01

    def __init__(self, min_period_s: float = OWN_MEMORY_MIN_PERIOD_S, cpu_share: float = OWN_MEMORY_CPU_SHARE,
                 platform: str = sys.platform, cpu_clock: Callable[[], float] = time.thread_time,
                 steady_period_s: float = OWN_MEMORY_STEADY_PERIOD_S):
        self.min_period_s = min_period_s
        self.cpu_share = cpu_share
        self.platform = platform
        self.steady_period_s = steady_period_s
        self.period_s = min_period_s
        self.last_cost_s = 0.0
        self._cpu_clock = cpu_clock
        self._last: float | None = None
        self._rss_high = 0  # the RSS sum at the reads so far, its highest
        self._rss_last: int | None = None  # the RSS sum at the last read

    def due(self, now: float, rss_bytes: int | None = None) -> bool:
        if self._last is None:
            return True
        if now >= self._last + self.period_s:
            return not self._steady(rss_bytes) or now >= self._last + max(self.period_s, self.steady_period_s)
        rising = rss_bytes is not None and rss_bytes > self._rss_high * (1 + self.RSS_RISE)
        return rising and now >= self._last + self.min_period_s

    def _steady(self, rss_bytes: int | None) -> bool:
        """The RSS sum is within ``RSS_STEADY`` of the one at the last read (either way)."""
        if rss_bytes is None or not self._rss_last:
            return False
        return abs(rss_bytes - self._rss_last) <= self.RSS_STEADY * self._rss_last

    def read(self, procs: Iterable[Any], now: float, rss_bytes: int | None = None) -> HostMemory | None:
        cpu0 = self._cpu_clock()
        memory = own_memory(procs, self.platform)
        self.last_cost_s = max(0.0, self._cpu_clock() - cpu0)
        self.period_s = max(self.min_period_s, self.last_cost_s / self.cpu_share)
        self._last = now
        self._rss_high = max(self._rss_high, rss_bytes or 0)
        self._rss_last = rss_bytes
        return memory


class HostSample(NamedTuple):
    """Host figures: system CPU %, the process tree's CPU % (of one core), RSS sum and own memory (None between
    the reads of ``HostMemoryReader``), system memory."""

    t: float
    cpu_pct: float | None
    process_cpu_pct: float | None
    process_rss_bytes: int | None
    system_memory_used_bytes: int | None
    system_memory_total_bytes: int | None
    host_memory_bytes: int | None = None
    host_memory_measure: str | None = None


class HostSampler:
    """CPU % since the previous sample (None on the first) and memory of a process tree."""

    def __init__(self, memory: HostMemoryReader | None = None) -> None:
        self._cpu_last: tuple[float, float] | None = None
        self._procs: dict[int, Any] = {}
        self.memory = memory or HostMemoryReader()

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
        own, now = None, time.monotonic()
        if pids is not None and self._procs and self.memory.due(now, rss):
            own = self.memory.read(list(self._procs.values()), now, rss)
        vm = psutil.virtual_memory()
        return HostSample(t, cpu_pct, proc_cpu, rss, vm.total - vm.available, vm.total,
                          own.memory_bytes if own else None, own.measure if own else None)

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
