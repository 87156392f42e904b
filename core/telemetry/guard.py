"""Guards over the GPU a run uses: too hot (pause training), memory nearly full (a warning).

``GpuGuard`` reads the run's GPU through NVML (``core.telemetry.nvml``) in its own thread once a
second and keeps two facts the training thread reads without waiting: ``paused`` (a plain bool)
and the events it has not taken yet (``take_events``). The training thread acts on them between
steps (``core.worker.guarding``): it writes the event records and the status, and while
``paused`` it sleeps instead of stepping. The guard itself writes nothing.

- **Thermal**: a temperature at or above ``pause_c`` for ``hold_s`` (10 s) in a row pauses;
  below ``resume_c`` resumes. Without a reading for ``blind_resume_s`` while paused (NVML
  stopped answering) it resumes with a warning rather than sleeping forever.
- **Memory**: the GPU's used memory at or above ``memory_fraction`` (95 %) of its capacity is a
  warning once per crossing; it is armed again below ``memory_rearm_fraction`` (90 %).

``thermal_limits`` turns the config's two fields and the GPU's NVML slowdown threshold into the
temperatures used (or a note saying why the thermal guard is off).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from core.telemetry.nvml import GpuSample, GpuSampler

HOLD_S = 10.0
PAUSE_BELOW_SLOWDOWN = 5     # default pause: 5 C below the slowdown threshold
RESUME_BELOW_SLOWDOWN = 15   # default resume: 15 C below it
RESUME_BELOW_PAUSE = 10      # the resume default when only the pause is set
MEMORY_FRACTION = 0.95
MEMORY_REARM_FRACTION = 0.90
SPILL_NOTE = ("on Windows the driver then spills into shared system memory and the run slows down rather than "
              "failing; elsewhere the next allocation past the capacity fails the run")
# NVIDIA's setting that turns Windows' crawl back into an out-of-memory error (driver 536.40 and later): said by the
# sysmem-fallback alert (core.run.sysmem_fallback) and the fit's over-capacity sentence (core.estimate.result)
SYSMEM_FALLBACK_FIX = ('NVIDIA Control Panel > Manage 3D settings > "CUDA - Sysmem Fallback Policy: Prefer No Sysmem '
                       'Fallback" (then a run past the card\'s memory fails at once with out of memory instead of crawling)')


class GuardEvent(NamedTuple):
    """What the guard saw: ``code`` is ``thermal_pause`` | ``thermal_resume`` | ``gpu_memory`` (| ``gpu_sysmem_fallback``:
    ``core.run.sysmem_fallback``, added through ``add_event``)."""

    code: str
    level: str
    message: str


class ThermalLimits(NamedTuple):
    pause_c: int | None  # None: the thermal guard is off
    resume_c: int | None
    note: str  # how the limits were chosen, or why the guard is off


def thermal_limits(enabled: bool, pause_c: int | None, resume_c: int | None, slowdown_c: int | None,
                   gpu_index: int) -> ThermalLimits:
    """The pause and resume temperatures: the config's, else from the GPU's slowdown threshold."""
    if not enabled:
        return ThermalLimits(None, None, "thermal guard off (runtime.thermal_guard is false)")
    where = f"GPU {gpu_index}"
    if pause_c is None:
        if slowdown_c is None:
            return ThermalLimits(None, None, f"thermal guard off: {where} reports no slowdown temperature; "
                                             "set runtime.thermal_pause_c to guard it")
        pause_c = slowdown_c - PAUSE_BELOW_SLOWDOWN
        auto_resume = slowdown_c - RESUME_BELOW_SLOWDOWN
        source = f"{PAUSE_BELOW_SLOWDOWN} C below {where}'s slowdown temperature {slowdown_c} C"
    else:
        auto_resume = pause_c - RESUME_BELOW_PAUSE
        source = "runtime.thermal_pause_c"
    note = ""
    if resume_c is None or resume_c >= pause_c:
        if resume_c is not None:
            note = f" (runtime.thermal_resume_c {resume_c} C is not below the pause temperature: using {auto_resume} C)"
        resume_c = auto_resume
    return ThermalLimits(pause_c, resume_c, f"thermal guard on {where}: pause at {pause_c} C for {HOLD_S:g} s "
                                            f"({source}), resume below {resume_c} C{note}")


class GpuGuard:
    """Watches GPU ``gpu_index``; ``observe`` is the rule (tests call it with their own clock)."""

    def __init__(self, gpu_index: int, limits: ThermalLimits, *, hold_s: float = HOLD_S,
                 memory_fraction: float = MEMORY_FRACTION, memory_rearm_fraction: float = MEMORY_REARM_FRACTION,
                 period_s: float = 1.0, blind_resume_s: float = 60.0,
                 sampler: GpuSampler | None = None, clock: Callable[[], float] = time.monotonic):
        self.gpu_index = gpu_index
        self.limits = limits
        self.hold_s = hold_s
        self.memory_fraction = memory_fraction
        self.memory_rearm_fraction = memory_rearm_fraction
        self.period_s = period_s
        self.blind_resume_s = blind_resume_s
        self.paused = False
        self.reason = ""  # why it is paused (for status.json), "" when not
        self.peak_c: int | None = None
        self.memory: tuple[int | None, int | None] = (None, None)  # the newest (used, total) bytes: one tuple, one read
        self._sampler = sampler or GpuSampler()
        self._clock = clock
        self._hot_since: float | None = None
        self._paused_at = 0.0
        self._last_reading = 0.0
        self._memory_armed = True
        self._events: list[GuardEvent] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: str | None = None
        self.thread_cpu_s = 0.0  # CPU time of the guard's thread (read after stop(): the bench)

    # --- the rule --------------------------------------------------------------------------

    def observe(self, now: float, temperature_c: int | None, memory_used: int | None,
                memory_total: int | None) -> list[GuardEvent]:
        """One reading: update ``paused`` and return the events it caused (also kept for ``take_events``)."""
        self.memory = (memory_used, memory_total)
        events = self._thermal(now, temperature_c) + self._memory(memory_used, memory_total)
        if events:
            with self._lock:
                self._events.extend(events)
        return events

    def _thermal(self, now: float, temp: int | None) -> list[GuardEvent]:
        pause, resume = self.limits.pause_c, self.limits.resume_c
        if pause is None or resume is None:
            return []
        gpu = f"GPU {self.gpu_index}"
        if temp is None:
            if self.paused and now - self._last_reading >= self.blind_resume_s:
                self._set_paused(False, "")
                return [GuardEvent("thermal_resume", "warning", f"{gpu}: no temperature reading for "
                                   f"{self.blind_resume_s:g} s while paused; training resumes unguarded")]
            return []
        self._last_reading = now
        self.peak_c = temp if self.peak_c is None else max(self.peak_c, temp)
        if self.paused:
            if temp < resume:
                paused_s = now - self._paused_at
                self._set_paused(False, "")
                return [GuardEvent("thermal_resume", "info", f"{gpu} cooled to {temp} C (below {resume} C) after "
                                   f"{paused_s:.0f} s paused; training resumes")]
            return []
        if temp < pause:
            self._hot_since = None
            return []
        if self._hot_since is None:
            self._hot_since = now
        if now - self._hot_since < self.hold_s:
            return []
        self._hot_since = None
        self._paused_at = now
        reason = (f"{gpu} at {temp} C, at or above {pause} C for {self.hold_s:g} s: training paused until it is "
                  f"below {resume} C")
        self._set_paused(True, reason)
        return [GuardEvent("thermal_pause", "warning", reason)]

    def _set_paused(self, paused: bool, reason: str) -> None:
        self.reason = reason  # the reason first: a reader that sees paused finds why
        self.paused = paused

    def _memory(self, used: int | None, total: int | None) -> list[GuardEvent]:
        if used is None or not total:
            return []
        fraction = used / total
        if fraction < self.memory_rearm_fraction:
            self._memory_armed = True
        if fraction < self.memory_fraction or not self._memory_armed:
            return []
        self._memory_armed = False
        return [GuardEvent("gpu_memory", "warning",
                           f"GPU {self.gpu_index} memory at {fraction * 100:.0f} % of its {total / 2**30:.1f} GiB: "
                           f"{SPILL_NOTE}. Fix: fewer parallel envs, a smaller batch or network, or close other "
                           "programs using the GPU")]

    def add_event(self, event: GuardEvent) -> None:
        """An event another rule drew from the guard's reading (the sysmem-fallback watch), written with the guard's."""
        with self._lock:
            self._events.append(event)

    def take_events(self) -> list[GuardEvent]:
        """The events since the last call (the training thread writes them)."""
        with self._lock:
            events, self._events = self._events, []
        return events

    # --- the thread ------------------------------------------------------------------------

    def start(self) -> GpuGuard:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="rlpanel-gpu-guard", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        cpu0 = time.thread_time()
        try:
            while not self._stop.wait(self.period_s):
                sample = self._read()
                if sample is None:
                    self.observe(self._clock(), None, None, None)
                else:
                    self.observe(self._clock(), sample.temperature_c, sample.memory_used_bytes, sample.memory_total_bytes)
        except Exception as exc:  # the guard must never take the training down with it
            self.error = f"{type(exc).__name__}: {exc}"
            self._set_paused(False, "")
        finally:
            self.thread_cpu_s = time.thread_time() - cpu0

    def _read(self) -> GpuSample | None:
        return next((s for s in self._sampler.sample() if s.index == self.gpu_index), None)
