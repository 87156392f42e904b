"""Peaks and means of a run's telemetry, read back from its ``telemetry.jsonl``: the GPU figures are
the run's GPU's (``run_gpu`` of the status line), the process figures the run's.

Which figure each memory peak is, first the run's own:

- ``peak_process_gpu_memory_bytes``: the GPU memory of the run's own processes, and
  ``gpu_memory_measure`` which figure it is (``core.telemetry.gpu_measure``): "nvml_process"
  (NVML's per-process figure), "wddm_counter" (Windows' counter, where NVML has none under WDDM)
  or "torch_reserved" (torch's reserved memory: no CUDA context); a summary from before names it
  in ``process_gpu_memory_source`` ("nvml" | "torch"), which ``gpu_memory_peaks`` reads too.
  ``peak_gpu_memory_bytes``: the card's total used, other programs and the driver's own
  reserve included (NVML reads ~480 MiB on an idle H100 that nvidia-smi shows as 0 MiB used).
- ``peak_host_memory_bytes``: the run's host memory, each process counted by its own memory
  (``host_memory_measure``: "pss" | "uss" | "private" | "rss", ``core.telemetry.host``);
  ``peak_rss_bytes``: the sum of their RSS (shared pages once per process), all that a run folder
  from before had. ``host_memory_peak`` and ``gpu_memory_peaks`` read either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple, TypeGuard

from core.telemetry.energy import run_energy
from core.telemetry.gpu_measure import WORDS, gpu_measure
from core.telemetry.host import MEASURES, HostMemory, measure_name
from core.telemetry.throttle import reason_names, slowdown
from core.util.jsonl import read_jsonl


def telemetry_summary(path: Path) -> dict[str, Any]:
    """Peaks and means of a run's telemetry (values are None when there is no data)."""
    records = read_jsonl(Path(path))
    samples = [r for r in records if r.get("kind") in (None, "agg")]
    gpu_rows = run_gpu_rows(records)

    def peak(rows: list[dict[str, Any]], key: str) -> Any:
        return _peak_row(rows, key)[0]

    util_sum = util_n = 0.0
    for r in gpu_rows:
        weight = r.get("n", 1) if r.get("kind") == "agg" else 1
        if _is_number(r.get("utilization_pct")) and _is_number(weight):
            util_sum += r["utilization_pct"] * weight
            util_n += weight
    # rss is the same host figure on every GPU's line of a tick: the peak is unaffected.
    # the telemetry "status" line: whether NVML answered (not the run's status.json)
    nvml_line = next((r for r in records if r.get("kind") == "status"), None)
    energy = run_energy(records)
    throttled = _throttled(gpu_rows, nvml_line.get("hz") if nvml_line else None)
    own_gpu, own_gpu_row = _peak_row(gpu_rows, "process_memory_bytes")
    host = _host_peak(samples)
    return {
        "peak_process_gpu_memory_bytes": own_gpu,
        "gpu_memory_measure": gpu_measure(own_gpu_row.get("process_memory_source")) if own_gpu_row else None,
        "peak_gpu_memory_bytes": peak(gpu_rows, "memory_used_bytes"),
        "peak_temperature_c": peak(gpu_rows, "temperature_c"),
        "mean_utilization_pct": round(util_sum / util_n, 1) if util_n else None,
        "peak_host_memory_bytes": host.memory_bytes if host else None,
        "host_memory_measure": host.measure if host else None,
        "peak_rss_bytes": peak(samples, "rss_bytes"),
        "telemetry_samples": sum(r.get("n", 1) if r.get("kind") == "agg" and _is_number(r.get("n", 1)) else 1
                                 for r in samples),
        "nvml_reason": nvml_line.get("reason") if nvml_line else None,
        "energy_kwh": float(f"{energy.kwh:.6g}") if energy else None,  # 6 significant digits: a short run is a few mWh
        "energy_source": energy.source if energy else None,
        "throttled_s": throttled[0],
        "throttle_reasons": throttled[1],
    }


def _peak_row(rows: list[dict[str, Any]], key: str) -> tuple[Any, dict[str, Any] | None]:
    """The largest value of ``key`` (an ``agg`` line's ``_max``) and the line that holds it."""
    best: tuple[Any, dict[str, Any] | None] = (None, None)
    for r in rows:
        v = r.get(key + "_max", r.get(key)) if r.get("kind") == "agg" else r.get(key)
        if _is_number(v) and (best[0] is None or v > best[0]):  # a damaged line may hold anything
            best = (v, r)
    return best


def _host_peak(samples: list[dict[str, Any]]) -> HostMemory | None:
    """The run's peak own memory and its measure; a file from before own memory was read: the RSS sum's."""
    value, row = _peak_row(samples, "host_memory_bytes")
    if value is not None and row is not None:
        measure = row.get("host_memory_measure")
        return HostMemory(int(value), measure if measure in MEASURES else "rss")
    value, _ = _peak_row(samples, "rss_bytes")
    return HostMemory(int(value), "rss") if value is not None else None


def host_memory_peak(summary: dict[str, Any]) -> HostMemory | None:
    """A summary's peak host memory and its measure, also from a summary.json that has only ``peak_rss_bytes``."""
    value, measure = summary.get("peak_host_memory_bytes"), summary.get("host_memory_measure")
    if _is_number(value):
        return HostMemory(int(value), measure if measure in MEASURES else "rss")
    rss = summary.get("peak_rss_bytes")
    return HostMemory(int(rss), "rss") if _is_number(rss) else None


class GpuMemoryPeaks(NamedTuple):
    """A summary's GPU memory peaks: the run's own processes' (and where the figure came from), the card's total."""

    run_bytes: float | None
    run_measure: str | None  # "nvml_process" | "wddm_counter" | "torch_reserved" (core.telemetry.gpu_measure) | None
    card_bytes: float | None


def gpu_memory_peaks(summary: dict[str, Any]) -> GpuMemoryPeaks:
    """Also from a summary.json that names the measure in its older field (``process_gpu_memory_source``)."""
    run, card = summary.get("peak_process_gpu_memory_bytes"), summary.get("peak_gpu_memory_bytes")
    measure = gpu_measure(summary.get("gpu_memory_measure", summary.get("process_gpu_memory_source")))
    return GpuMemoryPeaks(run if _is_number(run) else None, measure, card if _is_number(card) else None)


CARD_WORDS = "the card's total used, other programs and the driver's reserve included"


def memory_lines(summary: dict[str, Any]) -> list[str]:
    """The memory peaks of a summary in words, the run's own figures first (``rlpanel runs ID``)."""
    lines = []
    gpu = gpu_memory_peaks(summary)
    if gpu.run_bytes is not None:
        words = WORDS.get(gpu.run_measure or "", "its own processes, the figure's measure unknown")
        lines.append(f"peak GPU memory, this run: {gpu.run_bytes / 2**20:,.0f} MiB ({words})")
    if gpu.card_bytes is not None:
        lines.append(f"peak GPU memory, whole card: {gpu.card_bytes / 2**20:,.0f} MiB ({CARD_WORDS})")
    host = host_memory_peak(summary)
    if host is not None:
        lines.append(f"peak host memory, this run: {host.memory_bytes / 2**20:,.0f} MiB ({measure_name(host.measure)}"
                     + (": shared pages counted once per process)" if host.measure == "rss" else ")"))
    return lines


def run_gpu_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The GPU sample lines of the run's GPU: of the GPU each attempt's status line names (``run_gpu``), of
    every GPU where it names none (telemetry written before it did, NVML's index unknown)."""
    out, wanted = [], None
    for rec in records:
        kind = rec.get("kind")
        if kind == "status":
            gpu = rec.get("run_gpu")
            wanted = gpu if isinstance(gpu, int) and not isinstance(gpu, bool) else None
        elif kind in (None, "agg") and rec.get("gpu") is not None and (wanted is None or rec["gpu"] == wanted):
            out.append(rec)
    return out


def _throttled(gpu_rows: list[dict[str, Any]], hz: Any) -> tuple[float | None, list[str]]:
    """Seconds any GPU's clocks were slowed (power cap, thermal, ...) and the reasons seen (None: never read).

    A sample line stands for ``1/hz`` seconds, an ``agg`` line for its second; a tick counts once
    however many GPUs were slowed in it."""
    known = [r for r in gpu_rows if _is_number(r.get("throttle_reasons")) and isinstance(r["throttle_reasons"], int)]
    if not known:
        return None, []
    period = 1.0 / hz if _is_number(hz) and hz > 0 else 0.2
    seen = 0
    ticks: dict[float, float] = {}
    for r in known:
        mask = slowdown(r["throttle_reasons"])
        if mask and _is_number(r.get("t")):
            seen |= mask
            agg = r.get("kind") == "agg"
            ticks[float(int(r["t"])) if agg else round(float(r["t"]), 2)] = 1.0 if agg else period
    return round(sum(ticks.values()), 1), reason_names(seen)


def _is_number(v: Any) -> TypeGuard[float]:
    return isinstance(v, int | float) and not isinstance(v, bool)


_TEXT_FIELDS = frozenset({"reason", "process_memory_source", "driver_version", "name", "host_memory_measure"})


def well_formed_sample(rec: dict[str, Any]) -> bool:
    """Whether a telemetry line has the shape the recorder writes (a damaged file may hold anything):
    a sample or ``agg`` line has a numeric ``t`` and numbers (or null) everywhere but its text fields."""
    kind = rec.get("kind")
    if kind not in (None, "agg"):
        return isinstance(kind, str)
    if not _is_number(rec.get("t")):
        return False
    return all(v is None or (isinstance(v, str) if k in _TEXT_FIELDS else _is_number(v))
               for k, v in rec.items() if k not in ("kind", "t"))
