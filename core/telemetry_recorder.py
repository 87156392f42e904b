"""The worker's telemetry thread: samples GPUs and the run's process tree into ``telemetry.jsonl``.

File format (one JSON object a line, ``null`` = not available):

- ``{"t", "kind": "status", "nvml": true|false, "reason", "driver_version", "gpus": [names]}``
  once at start; when NVML is not available the reason is recorded here, once.
- a sample, one line per GPU per tick (no ``kind``): ``t``, ``gpu`` (index, or ``null`` for a
  host-only line when NVML is not available), ``name`` is left out (it is in the status line),
  ``memory_used_bytes``, ``memory_total_bytes``, ``temperature_c``, ``utilization_pct``,
  ``memory_utilization_pct``, ``power_w``, ``power_limit_w``, ``sm_clock_mhz``, ``fan_pct``,
  ``process_memory_bytes``, ``process_memory_source``, ``rss_bytes``, ``cpu_pct`` (system),
  ``process_cpu_pct`` (the run's process tree, % of one core).
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

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.telemetry import GpuSampler, HostSample, HostSampler, detect_gpus, nvml_status
from core.util.files import write_atomic
from core.util.jsonl import JsonlWriter, read_jsonl
from core.util.procs import tree_pids

FILE_NAME = "telemetry.jsonl"
MAX_HZ = 50.0
NUMERIC = ("memory_used_bytes", "temperature_c", "utilization_pct", "memory_utilization_pct",
           "power_w", "sm_clock_mhz", "fan_pct", "process_memory_bytes", "rss_bytes", "cpu_pct",
           "process_cpu_pct")
CONSTANT = ("memory_total_bytes", "power_limit_w", "process_memory_source")


class TelemetryRecorder:
    """Samples at ``hz`` in a daemon thread and appends to ``run_dir/telemetry.jsonl``.

    ``root_pid`` is the root of the run's process tree (default: this process). ``torch_memory``
    returns ``torch.cuda.memory_reserved()`` (or None) and is used only where NVML has no
    per-process figure. ``hz <= 0`` disables recording (``start`` does nothing).
    """

    def __init__(self, run_dir: Path, hz: float, root_pid: int | None = None,
                 torch_memory: Callable[[], int | None] | None = None, *, torch_device: int = 0,
                 flush_every_s: float = 1.0, tree_refresh_s: float = 3.0,
                 thin_after_s: float = 3600.0, thin_every_s: float = 3600.0):
        if not isinstance(hz, (int, float)) or not 0 <= hz <= MAX_HZ:
            raise ValueError(f"telemetry rate must be between 0 (off) and {MAX_HZ:g} Hz, got {hz!r}; "
                             "fix: set runtime.telemetry_hz (default 5)")
        self.path = Path(run_dir) / FILE_NAME
        self.hz = float(hz)
        self.root_pid = os.getpid() if root_pid is None else root_pid
        self.flush_every_s = flush_every_s
        self.tree_refresh_s = tree_refresh_s
        self.thin_after_s = thin_after_s
        self.thin_every_s = thin_every_s
        self._gpu = GpuSampler(torch_memory=torch_memory, torch_device=torch_device)
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
                           "gpus": gpus, "hz": self.hz}])
            period = 1.0 / self.hz
            start = next_tick = time.monotonic()
            last_flush = last_tree = start
            next_thin = start + self.thin_after_s + self.thin_every_s
            pids = tree_pids(self.root_pid)
            buffer: list[dict] = []
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

    def _tick(self, nvml: bool, pids: set[int]) -> list[dict]:
        host = self._host.sample(pids)
        if not nvml:
            return [_host_fields({"t": round(host.t, 3), "gpu": None}, host)]
        lines = []
        for s in self._gpu.sample(pids):
            lines.append(_host_fields({
                "t": round(s.t, 3), "gpu": s.index,
                "memory_used_bytes": s.memory_used_bytes, "memory_total_bytes": s.memory_total_bytes,
                "temperature_c": s.temperature_c, "utilization_pct": s.utilization_pct,
                "memory_utilization_pct": s.memory_utilization_pct,
                "power_w": _round(s.power_w, 2), "power_limit_w": _round(s.power_limit_w, 1),
                "sm_clock_mhz": s.sm_clock_mhz, "fan_pct": s.fan_pct,
                "process_memory_bytes": s.process_memory_bytes,
                "process_memory_source": s.process_memory_source}, host))
        return lines

    def _flush(self, writer: JsonlWriter, buffer: list[dict]) -> None:
        if buffer:
            writer.write(buffer)
            self.lines_written += len(buffer)
            self.flushes += 1
            buffer.clear()

    def _thin(self, writer: JsonlWriter, buffer: list[dict]) -> JsonlWriter:
        self._flush(writer, buffer)
        writer.close()
        try:
            thin_telemetry(self.path, time.time() - self.thin_after_s)
        except OSError as exc:  # Windows: a reader holds the file open; try again next time
            print(f"rlpanel telemetry: thinning skipped ({exc})", file=sys.stderr)
        return JsonlWriter(self.path)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _host_fields(line: dict, host: HostSample) -> dict:
    line["rss_bytes"] = host.process_rss_bytes
    line["cpu_pct"] = host.cpu_pct
    line["process_cpu_pct"] = host.process_cpu_pct
    return line


# --- thinning -----------------------------------------------------------------------------------

def thin_telemetry(path: Path, older_than_t: float) -> int:
    """Rewrite samples older than unix time ``older_than_t`` as per-second min/max/mean lines.

    Returns how many sample lines were folded. The file is replaced atomically.
    """
    import json

    records = read_jsonl(path)
    old = [r for r in records if "kind" not in r and r.get("t", math.inf) < older_than_t]
    if not old:
        return 0
    groups: dict[tuple[int, Any], list[dict]] = {}
    for r in old:
        groups.setdefault((int(r["t"]), r.get("gpu")), []).append(r)
    aggs = [_aggregate(sec, gpu, rows) for (sec, gpu), rows in groups.items()]
    rest = [r for r in records if not ("kind" not in r and r.get("t", math.inf) < older_than_t)]
    merged = sorted(aggs + rest, key=lambda r: (r.get("kind") != "status", r.get("t", 0)))
    write_atomic(path, "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in merged))
    return len(old)


def _aggregate(second: int, gpu: Any, rows: list[dict]) -> dict:
    agg: dict[str, Any] = {"t": second, "kind": "agg", "gpu": gpu, "n": len(rows), "dt": 1}
    for key in NUMERIC:
        values = [r[key] for r in rows if r.get(key) is not None]
        if values:
            low, high, mean = min(values), max(values), sum(values) / len(values)
            agg[key] = round(mean) if all(isinstance(v, int) for v in values) else round(mean, 2)
            if low != high:  # a constant second is one number (keeps a 12 h file small)
                agg[key + "_min"], agg[key + "_max"] = low, high
        else:
            agg[key] = None
    for key in CONSTANT:
        agg[key] = next((r[key] for r in reversed(rows) if r.get(key) is not None), None)
    return agg


# --- summary ------------------------------------------------------------------------------------

def telemetry_summary(run_dir: Path) -> dict:
    """Peaks and means of a run's telemetry (values are None when there is no data)."""
    records = read_jsonl(Path(run_dir) / FILE_NAME)
    samples = [r for r in records if r.get("kind") in (None, "agg")]
    gpu_rows = [r for r in samples if r.get("gpu") is not None]

    def peak(rows: list[dict], key: str) -> Any:
        values = [r.get(key + "_max", r.get(key)) if r.get("kind") == "agg" else r.get(key) for r in rows]
        values = [v for v in values if v is not None]
        return max(values) if values else None

    util_sum = util_n = 0.0
    for r in gpu_rows:
        if r.get("utilization_pct") is not None:
            weight = r.get("n", 1) if r.get("kind") == "agg" else 1
            util_sum += r["utilization_pct"] * weight
            util_n += weight
    # rss is the same host figure on every GPU's line of a tick: the peak is unaffected.
    status = next((r for r in records if r.get("kind") == "status"), None)
    return {
        "peak_gpu_memory_bytes": peak(gpu_rows, "memory_used_bytes"),
        "peak_process_gpu_memory_bytes": peak(gpu_rows, "process_memory_bytes"),
        "peak_temperature_c": peak(gpu_rows, "temperature_c"),
        "mean_utilization_pct": round(util_sum / util_n, 1) if util_n else None,
        "peak_rss_bytes": peak(samples, "rss_bytes"),
        "telemetry_samples": sum(r.get("n", 1) if r.get("kind") == "agg" else 1 for r in samples),
        "nvml_reason": status.get("reason") if status else None,
    }
