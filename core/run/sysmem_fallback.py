"""Windows moving a run's GPU memory to system RAM, seen from the run: a full card and a speed that fell.

Since driver 536.40 a CUDA process that runs out of VRAM on Windows is not refused: the driver moves
allocations to system RAM ("sysmem fallback") and the run goes on several times slower, all night. Nothing
fails, so nothing said so. The rule here names it from what the worker already has once a second: the
card's used and total memory (the GPU guard's NVML reading) and the run's speed.

- **Full**: used at or above ``FULL_FRACTION`` (95 %) of total, left below ``EMPTY_FRACTION`` (90 %), as
  the guard's memory warning. Not 99 %: WDDM keeps part of the card for the desktop and the driver, and
  spilling starts before NVML's used reaches the total (read in NVIDIA's notes and users' reports, not
  measured here: no Windows machine).
- **Speed**: ``core.run.eta.SpeedEstimate``'s rolling rate, the steps over the last 60 s (one sample is
  never the speed: a rollout, an update, an evaluation each stall it for seconds).
- **Earlier level**: the median of the rolling rates in the ``BASELINE_S`` before the card filled, left out
  the attempt's first ``WARMUP_S`` (env processes starting, torch's first update); fewer than
  ``MIN_BASELINE_S`` of them is no earlier level, and no verdict ("unknown", not a guess). A run whose card
  is full from its first minute is the fit bar's to warn of (``core.estimate``'s over-capacity sentence).
- **Slowed**: the rolling rate under ``SLOW_FRACTION`` (half) of the earlier level for ``HOLD_S`` in a row
  while the card stays full.

Windows only (``watch_for``): elsewhere an allocation past the capacity fails the run, and a slowing run
with a full card is something else. Said once per attempt. A thermal slowdown while full would read the
same; the guard's thermal pause restarts the speed (a silence of 30 s starts ``SpeedEstimate`` over).
"""

from __future__ import annotations

import statistics
import sys
from collections import deque
from collections.abc import Iterable
from typing import Any, NamedTuple

from core.run.eta import SpeedEstimate
from core.telemetry.guard import SYSMEM_FALLBACK_FIX

FULL_FRACTION = 0.95
EMPTY_FRACTION = 0.90
SLOW_FRACTION = 0.5
WARMUP_S = 60.0
BASELINE_S = 300.0
MIN_BASELINE_S = 30.0
HOLD_S = 30.0
CODE = "gpu_sysmem_fallback"  # the event record's code (what a notifier keys on)


class FallbackSample(NamedTuple):
    """One second of a run: ``t_s`` (any clock in seconds), the card's memory, the rolling speed (None: not yet)."""

    t_s: float
    used_bytes: int | None
    total_bytes: int | None
    steps_per_s: float | None


class FallbackFinding(NamedTuple):
    t_s: float
    before_steps_per_s: float  # the earlier level: the median before the card filled
    now_steps_per_s: float
    used_bytes: int
    total_bytes: int

    def message(self, gpu_index: int) -> str:
        return (f"Windows is moving GPU memory to system RAM: the run has slowed from {self.before_steps_per_s:,.0f} to "
                f"{self.now_steps_per_s:,.0f} steps/s while GPU {gpu_index}'s memory is at "
                f"{self.used_bytes / self.total_bytes * 100:.0f} % of its {self.total_bytes / 2**30:.1f} GiB. "
                f"Fix: {SYSMEM_FALLBACK_FIX}, or a smaller batch, buffer or network on the GPU")


class SysmemFallbackRule:
    """The rule over samples in time order; ``observe`` returns the finding once, then None."""

    def __init__(self) -> None:
        self._start: float | None = None
        self._rates: deque[tuple[float, float]] = deque()  # (t, rolling rate) after warm-up, the card not full
        self._full = False
        self._before: float | None = None  # the earlier level, fixed when the card filled
        self._slow_since: float | None = None
        self.finding: FallbackFinding | None = None

    def observe(self, s: FallbackSample) -> FallbackFinding | None:
        if self.finding is not None:
            return None
        if self._start is None:
            self._start = s.t_s
        if s.used_bytes is None or not s.total_bytes or s.steps_per_s is None:
            self._slow_since = None  # no reading or no speed this second (NVML silent, the speed measured afresh):
            return None              # no evidence either way, and a slowdown must be seen for HOLD_S again
        fraction = s.used_bytes / s.total_bytes
        if not self._full and fraction >= FULL_FRACTION:
            self._full, self._slow_since = True, None
            self._before = self._earlier_level(s.t_s)
        elif self._full and fraction < EMPTY_FRACTION:
            self._full, self._before = False, None
        if not self._full:
            if s.t_s - self._start >= WARMUP_S:
                self._rates.append((s.t_s, s.steps_per_s))
                while self._rates and self._rates[0][0] < s.t_s - BASELINE_S:
                    self._rates.popleft()
            return None
        if self._before is None:
            return None  # the card filled before there was an earlier level: unknown, no verdict
        if s.steps_per_s >= SLOW_FRACTION * self._before:
            self._slow_since = None
            return None
        if self._slow_since is None:
            self._slow_since = s.t_s
        if s.t_s - self._slow_since < HOLD_S:
            return None
        self.finding = FallbackFinding(s.t_s, self._before, s.steps_per_s, s.used_bytes, s.total_bytes)
        return self.finding

    def _earlier_level(self, now: float) -> float | None:
        rates = [r for t, r in self._rates if t >= now - BASELINE_S]
        if len(rates) < 2 or self._rates[-1][0] - self._rates[0][0] < MIN_BASELINE_S:
            return None
        return statistics.median(rates)


class SysmemFallbackWatch:
    """The rule fed as the worker feeds it: the training's step and the card's memory at a time; the rolling
    speed from ``SpeedEstimate`` (the one the progress line shows)."""

    def __init__(self) -> None:
        self.speed = SpeedEstimate()
        self.rule = SysmemFallbackRule()

    def observe(self, t_s: float, step: int, used_bytes: int | None, total_bytes: int | None) -> FallbackFinding | None:
        rate = self.speed.update(step, t_s)
        return self.rule.observe(FallbackSample(t_s, used_bytes, total_bytes, rate))


def watch_for(platform: str = sys.platform) -> SysmemFallbackWatch | None:
    """A watch on Windows; None elsewhere (an allocation past the capacity fails there: nothing crawls)."""
    return SysmemFallbackWatch() if platform.startswith("win") else None


def replay(progress: Iterable[dict[str, Any]], telemetry: Iterable[dict[str, Any]], gpu_index: int,
           platform: str = sys.platform) -> FallbackFinding | None:
    """The rule over a run's recorded progress records and telemetry lines (their ``t``: seconds since the epoch), as
    the worker would have seen them: each progress record with the newest reading of GPU ``gpu_index`` at or before it."""
    watch = watch_for(platform)
    if watch is None:
        return None
    readings = sorted(((r["t"], r.get("memory_used_bytes"), r.get("memory_total_bytes")) for r in telemetry
                       if r.get("gpu") == gpu_index and "t" in r), key=lambda r: r[0])
    index, used, total = 0, None, None
    for rec in sorted(progress, key=lambda r: r["t"]):
        while index < len(readings) and readings[index][0] <= rec["t"]:
            _, used, total = readings[index]
            index += 1
        finding = watch.observe(rec["t"], rec["step"], used, total)
        if finding is not None:
            return finding
    return None
