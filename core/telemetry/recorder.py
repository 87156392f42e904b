"""The worker's telemetry thread: samples GPUs and the run's process tree into ``telemetry.jsonl``.

The recorder is given the file to write (the run folder's layout names it); ``thinning`` folds
old samples and ``summary`` reads peaks back.

File format (one JSON object a line, ``null`` = not available):

- ``{"t", "kind": "status", "nvml": true|false, "reason", "driver_version", "gpus": [names], "run_gpu"}``
  once at start; when NVML is not available the reason is recorded here, once. ``run_gpu``: the
  NVML index of the GPU the run trains on (or watches, on a CPU run), mapped from its CUDA index
  (``core.telemetry.devices``); null when not known. The energy counts that GPU only.
- a sample, one line per GPU per tick (no ``kind``): ``t``, ``gpu`` (index, or ``null`` for a
  host-only line when NVML is not available), ``name`` is left out (it is in the status line),
  ``memory_used_bytes``, ``memory_total_bytes``, ``temperature_c``, ``temperature_slowdown_c``
  (NVML's slowdown threshold), ``utilization_pct``,
  ``memory_utilization_pct``, ``power_w``, ``power_limit_w``, ``sm_clock_mhz``, ``fan_pct``,
  ``process_memory_bytes``, ``process_memory_source`` (its measure: "nvml_process" | "wddm_counter" |
  "torch_reserved", ``core.telemetry.gpu_measure``; "nvml" | "torch" in older files), ``throttle_reasons`` (NVML's clock event
  reasons bit mask, ``core.telemetry.throttle``), ``energy_mj`` (NVML's total energy counter,
  millijoules since the driver loaded), ``rss_bytes`` (the sum of the RSS of the run's processes:
  shared pages once per process), ``host_memory_bytes`` + ``host_memory_measure`` (the run's host
  memory, each process counted by its own memory: "pss" | "uss" | "private" | "rss",
  ``core.telemetry.host``; only on the lines of a tick that read it, at most once a second), ``cpu_pct``
  (system), ``process_cpu_pct`` (the run's process tree, % of one core).
- ``{"t", "kind": "agg", "gpu", "n", "dt": 1, <field>: mean, <field>_min, <field>_max, ...}``:
  thinned history, see below (``_min``/``_max`` are left out when they equal the mean).

Samples are buffered and appended in batches at most once a second (``flush_every_s``).
The process tree (``root_pid`` and its descendants) is refreshed every ``tree_refresh_s``.

Thinning. At 5 Hz a full-rate line is ~330 bytes, so 12 h on one GPU would be ~70 MB. Samples
older than ``thin_after_s`` (one hour) are therefore rewritten as one ``agg`` line per second
per GPU keeping min, max and mean of every number (the peaks of bursts survive), ~600-900 bytes a
second instead of ~1,700. Thinning runs every ``thin_every_s`` (an hour) and at stop, so the
file holds at most two hours at full rate: 12 h on one GPU stays near 40 MB. Thinning replaces
the file atomically with a shorter one; a ``core.util.jsonl.JsonlReader`` following it notices the
shrink and starts over from the beginning, so a follower must replace (not append) what it had.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.telemetry.host import HostSample, HostSampler
from core.telemetry.nvml import GpuSampler, detect_gpus, nvml_status
from core.telemetry.thinning import thin_telemetry
from core.telemetry.wddm import WddmMemory, platform_wddm
from core.util.jsonl import JsonlWriter
from core.util.procs import tree_pids

MAX_HZ = 50.0


class TelemetryRecorder:
    """Samples at ``hz`` in a daemon thread and appends to ``path`` (the run's ``telemetry.jsonl``).

    ``root_pid`` is the root of the run's process tree (default: this process). ``torch_memory``
    returns ``torch.cuda.memory_reserved()`` (or None) and is used only where NVML has no
    per-process figure and Windows' counter (``wddm``: this machine's by default, ``core.telemetry.wddm``)
    has none either. ``on_run_gpu`` is called on this thread with the run GPU's utilisation (%) at each
    sample (``core.worker.cycle_clock``). ``hz <= 0`` disables recording (``start`` does nothing).
    """

    def __init__(self, path: Path, hz: float, root_pid: int | None = None,
                 torch_memory: Callable[[], int | None] | None = None, *, run_gpu: int | None = None,
                 on_run_gpu: Callable[[float | None], None] | None = None, wddm: WddmMemory | None = None,
                 flush_every_s: float = 1.0, tree_refresh_s: float = 3.0,
                 thin_after_s: float = 3600.0, thin_every_s: float = 3600.0):
        if not isinstance(hz, (int, float)) or not 0 <= hz <= MAX_HZ:
            raise ValueError(f"telemetry rate must be between 0 (off) and {MAX_HZ:g} Hz, got {hz!r}; "
                             "fix: set runtime.telemetry_hz (default 5)")
        self.path = Path(path)
        self.hz = float(hz)
        self.root_pid = os.getpid() if root_pid is None else root_pid
        self.flush_every_s = flush_every_s
        self.tree_refresh_s = tree_refresh_s
        self.thin_after_s = thin_after_s
        self.thin_every_s = thin_every_s
        self.run_gpu = run_gpu
        self.on_run_gpu = on_run_gpu  # told the run GPU's utilisation at each sample (the worker's time split)
        self._gpu = GpuSampler(torch_memory=torch_memory, torch_device=0 if run_gpu is None else run_gpu,
                               wddm=wddm if wddm is not None else platform_wddm())
        self._host = HostSampler()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Counters for tests and the bench (read after stop()).
        self.ticks = 0
        self.lines_written = 0
        self.flushes = 0
        self.thread_cpu_s = 0.0
        self.error: str | None = None

    def start(self) -> None:
        if self.hz <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="rlpanel-telemetry", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop sampling, flush what is buffered and join the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> TelemetryRecorder:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the thread ---------------------------------------------------------------------------

    def _run(self) -> None:
        cpu0 = time.thread_time()
        try:
            self._loop()
        except Exception as exc:  # telemetry must never take the training down with it
            self.error = f"{type(exc).__name__}: {exc}"
            print(f"rlpanel telemetry stopped: {self.error}", file=sys.stderr)
        finally:
            self.thread_cpu_s = time.thread_time() - cpu0

    def _loop(self) -> None:
        status = nvml_status()
        writer = JsonlWriter(self.path)
        try:
            gpus = [g.name for g in detect_gpus()]
            writer.write([{"t": round(time.time(), 3), "kind": "status", "nvml": status.available,
                           "reason": status.reason, "driver_version": status.driver_version,
                           "gpus": gpus, "hz": self.hz, "run_gpu": self.run_gpu}])
            period = 1.0 / self.hz
            start = next_tick = time.monotonic()
            last_flush = last_tree = start
            next_thin = start + self.thin_after_s + self.thin_every_s
            pids = tree_pids(self.root_pid)
            buffer: list[dict[str, Any]] = []
            while not self._stop.wait(max(0.0, next_tick - time.monotonic())):
                now = time.monotonic()
                if now - last_tree >= self.tree_refresh_s:
                    pids, last_tree = tree_pids(self.root_pid) or pids, now
                buffer.extend(self._tick(status.available, pids))
                self.ticks += 1
                next_tick += period
                if next_tick < now:  # fell behind (suspended laptop): skip, do not burst
                    next_tick = now + period
                if now - last_flush >= self.flush_every_s:
                    self._flush(writer, buffer)
                    last_flush = now
                if now >= next_thin:
                    writer = self._thin(writer, buffer)
                    next_thin = now + self.thin_every_s
            self._flush(writer, buffer)
            if time.monotonic() - start > self.thin_after_s:
                writer = self._thin(writer, buffer)
        finally:
            writer.close()
            self._gpu.close()

    def _tick(self, nvml: bool, pids: set[int]) -> list[dict[str, Any]]:
        host = self._host.sample(pids)
        if not nvml:
            return [_host_fields({"t": round(host.t, 3), "gpu": None}, host)]
        lines = []
        for s in self._gpu.sample(pids):
            if self.on_run_gpu is not None and s.index == self.run_gpu:
                self.on_run_gpu(s.utilization_pct)
            lines.append(_host_fields({
                "t": round(s.t, 3), "gpu": s.index,
                "memory_used_bytes": s.memory_used_bytes, "memory_total_bytes": s.memory_total_bytes,
                "temperature_c": s.temperature_c, "temperature_slowdown_c": s.temperature_slowdown_c,
                "utilization_pct": s.utilization_pct,
                "memory_utilization_pct": s.memory_utilization_pct,
                "power_w": _round(s.power_w, 2), "power_limit_w": _round(s.power_limit_w, 1),
                "sm_clock_mhz": s.sm_clock_mhz, "fan_pct": s.fan_pct,
                "process_memory_bytes": s.process_memory_bytes,
                "process_memory_source": s.process_memory_source,
                "throttle_reasons": s.throttle_reasons, "energy_mj": s.energy_mj}, host))
        return lines

    def _flush(self, writer: JsonlWriter, buffer: list[dict[str, Any]]) -> None:
        if buffer:
            writer.write(buffer)
            self.lines_written += len(buffer)
            self.flushes += 1
            buffer.clear()

    def _thin(self, writer: JsonlWriter, buffer: list[dict[str, Any]]) -> JsonlWriter:
        self._flush(writer, buffer)
        writer.close()
        try:
            thin_telemetry(self.path, time.time() - self.thin_after_s)
        except OSError as exc:  # Windows: a reader holds the file open; try again next time
            print(f"rlpanel telemetry: thinning skipped ({exc})", file=sys.stderr)
        return JsonlWriter(self.path)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _host_fields(line: dict[str, Any], host: HostSample) -> dict[str, Any]:
    line["rss_bytes"] = host.process_rss_bytes
    if host.host_memory_bytes is not None:  # read every few ticks: the other lines leave it out (~45 bytes each)
        line["host_memory_bytes"] = host.host_memory_bytes
        line["host_memory_measure"] = host.host_memory_measure
    line["cpu_pct"] = host.cpu_pct
    line["process_cpu_pct"] = host.process_cpu_pct
    return line
