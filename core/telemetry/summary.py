"""Peaks and means of a run's telemetry, read back from its ``telemetry.jsonl``: the GPU figures are
the run's GPU's (``run_gpu`` of the status line), the process figures the run's."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeGuard

from core.telemetry.energy import run_energy
from core.telemetry.throttle import reason_names, slowdown
from core.util.jsonl import read_jsonl


def telemetry_summary(path: Path) -> dict[str, Any]:
    """Peaks and means of a run's telemetry (values are None when there is no data)."""
    records = read_jsonl(Path(path))
    samples = [r for r in records if r.get("kind") in (None, "agg")]
    gpu_rows = run_gpu_rows(records)

    def peak(rows: list[dict[str, Any]], key: str) -> Any:
        read = (r.get(key + "_max", r.get(key)) if r.get("kind") == "agg" else r.get(key) for r in rows)
        values: list[float] = [v for v in read if _is_number(v)]  # a damaged line may hold anything
        return max(values) if values else None

    util_sum = util_n = 0.0
    for r in gpu_rows:
        weight = r.get("n", 1) if r.get("kind") == "agg" else 1
        if _is_number(r.get("utilization_pct")) and _is_number(weight):
            util_sum += r["utilization_pct"] * weight
            util_n += weight
    # rss is the same host figure on every GPU's line of a tick: the peak is unaffected.
    status = next((r for r in records if r.get("kind") == "status"), None)
    energy = run_energy(records)
    throttled = _throttled(gpu_rows, status.get("hz") if status else None)
    return {
        "peak_gpu_memory_bytes": peak(gpu_rows, "memory_used_bytes"),
        "peak_process_gpu_memory_bytes": peak(gpu_rows, "process_memory_bytes"),
        "peak_temperature_c": peak(gpu_rows, "temperature_c"),
        "mean_utilization_pct": round(util_sum / util_n, 1) if util_n else None,
        "peak_rss_bytes": peak(samples, "rss_bytes"),
        "telemetry_samples": sum(r.get("n", 1) if r.get("kind") == "agg" and _is_number(r.get("n", 1)) else 1
                                 for r in samples),
        "nvml_reason": status.get("reason") if status else None,
        "energy_kwh": float(f"{energy.kwh:.6g}") if energy else None,  # 6 significant digits: a short run is a few mWh
        "energy_source": energy.source if energy else None,
        "throttled_s": throttled[0],
        "throttle_reasons": throttled[1],
    }


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


_TEXT_FIELDS = frozenset({"reason", "process_memory_source", "driver_version", "name"})


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
