"""The training side of the GPU guard (``core.telemetry.guard``): events, the paused state, the wait.

``GuardHandler`` is called by the ``RunRecorder`` once a second, between steps (so a run with a
guard that never acts pays nothing per step). It writes the guard's events as event records
(with their ``code``: ``thermal_pause``, ``thermal_resume``, ``gpu_memory``) and, while the
guard says paused, holds the training thread: status ``paused`` with ``pause_reason``, a wait
that still answers STOP and SIGTERM within a second, then status ``running`` again and the time
spent paused added to ``paused_s`` (over every attempt of the run). On Windows it also feeds the step and the
guard's memory reading to the sysmem-fallback watch (``core.run.sysmem_fallback``): a full card and a speed that
fell to under half is an event ``gpu_sysmem_fallback`` and a warning notification, once per attempt.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from core.config.schema import RunConfig
from core.notify.run_events import notify_run_event
from core.run import records
from core.run.status import read_recorded_status, write_status
from core.run.sysmem_fallback import CODE as SYSMEM_FALLBACK
from core.run.sysmem_fallback import SysmemFallbackWatch
from core.telemetry.devices import GpuMatch
from core.telemetry.guard import GpuGuard, GuardEvent, thermal_limits
from core.telemetry.nvml import nvml_status, slowdown_threshold
from core.util.jsonl import JsonlWriter

WAIT_S = 0.5


def start_guard(cfg: RunConfig, where: GpuMatch | None) -> tuple[GpuGuard | None, str]:
    """A started guard over the run's GPU (NVML's index, ``core.worker.devices.run_gpu``) and a note for
    the event log (None and why when NVML is not there)."""
    status = nvml_status()
    if where is None or not status.available or not status.device_count:
        return None, f"GPU guards off: {status.reason or 'no GPU'}"
    rt = cfg.runtime
    limits = thermal_limits(rt.thermal_guard, rt.thermal_pause_c, rt.thermal_resume_c, slowdown_threshold(where.gpu),
                            where.gpu)
    return GpuGuard(where.gpu, limits).start(), f"{limits.note} (NVML GPU {where.gpu}: {where.how})"


class GuardHandler:
    """Acts on the guard once a second; ``__call__`` returns True when a STOP came while paused."""

    def __init__(self, run_dir: Path, guard: GpuGuard, out: JsonlWriter, stop_requested: Callable[[], bool],
                 step: Callable[[], int], before_pause: Callable[[], None],
                 notify: Callable[[GuardEvent], None] | None = None, fallback: SysmemFallbackWatch | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.run_dir = run_dir
        self.guard = guard
        self.out = out
        self.stop_requested = stop_requested
        self.step = step
        self.before_pause = before_pause
        self.notify = notify  # told of each event after its record is written (notifications hook in here)
        self.fallback = fallback  # Windows: the sysmem-fallback watch (core.run.sysmem_fallback.watch_for), else None
        self.clock = clock
        self.paused_s = read_recorded_status(run_dir).paused_s or 0.0
        self.pauses = 0

    def write_events(self) -> None:
        for ev in self.guard.take_events():
            self.out.write([records.event(ev.message, ev.level, self.step(), code=ev.code)])
            print(records.event_echo(ev.level, ev.message), flush=True)
            if self.notify is not None:
                try:
                    self.notify(ev)
                except Exception as exc:  # a notification must never stop a run
                    print(f"worker: notifying {ev.code} failed: {exc}", flush=True)

    def __call__(self) -> bool:
        self._watch_fallback()
        self.write_events()
        if not self.guard.paused:
            return False
        return self._hold()

    def _watch_fallback(self) -> None:
        if self.fallback is None:
            return
        used, total = self.guard.memory
        finding = self.fallback.observe(self.clock(), self.step(), used, total)
        if finding is not None:
            self.guard.add_event(GuardEvent(SYSMEM_FALLBACK, "warning", finding.message(self.guard.gpu_index)))

    def _hold(self) -> bool:
        """Wait while paused; True when a stop was asked for meanwhile."""
        self.before_pause()
        self.pauses += 1
        started = time.monotonic()
        write_status(self.run_dir, state="paused", pause_reason=self.guard.reason or "paused by the GPU guard")
        stopped = False
        try:
            while self.guard.paused:
                if self.stop_requested():
                    stopped = True
                    break
                time.sleep(WAIT_S)
                self.write_events()
        finally:
            self.paused_s += time.monotonic() - started
            write_status(self.run_dir, state="running", pause_reason=None, paused_s=round(self.paused_s, 1))
        self.write_events()
        return stopped


# a resume is no news at 3 am
GUARD_NOTIFICATIONS = {"thermal_pause": "paused", "gpu_memory": "warning", SYSMEM_FALLBACK: "warning"}


def notify_guard_event(run_dir: Path, ev: GuardEvent) -> None:
    """Push a guard's pause, memory warning or sysmem fallback to the user's notify.yaml URLs, from a thread (training
    never waits)."""
    event = GUARD_NOTIFICATIONS.get(ev.code)
    if event is not None:
        notify_run_event(run_dir, event, ev.message, in_background=True)
