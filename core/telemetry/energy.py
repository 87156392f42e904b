"""The GPU energy a run used, from its ``telemetry.jsonl``: NVML's energy counter, else its power samples.

Per GPU and per attempt (each attempt's recorder starts with a ``status`` line, so the time
between attempts is never counted), the energy is the sum of the counter's increases between
consecutive readings (``energy_mj``, millijoules since the driver loaded; a counter that went
down was reset and that step is skipped). An attempt with fewer than two counter readings
(the GPU has no counter, or NVML answers NotSupported) integrates ``power_w`` over time with the
trapezoid rule instead, skipping gaps longer than ``MAX_GAP_S`` (a suspended laptop). The
figure covers the run's GPU, which the recorder's status line names (``run_gpu``: NVML's index,
mapped from the CUDA device by ``core.telemetry.devices``); telemetry written before it did counts
every GPU the recorder saw.
"""

from __future__ import annotations

from typing import Any, NamedTuple

MAX_GAP_S = 10.0
J_PER_KWH = 3.6e6


class Energy(NamedTuple):
    joules: float
    source: str  # "NVML energy counter" | "power samples" | "counter and power samples"

    @property
    def kwh(self) -> float:
        return self.joules / J_PER_KWH


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _counter_joules(rows: list[dict[str, Any]]) -> float | None:
    readings = [r["energy_mj"] for r in rows if _num(r.get("energy_mj"))]
    if len(readings) < 2:
        return None
    return float(sum(b - a for a, b in zip(readings, readings[1:], strict=False) if b >= a)) / 1000.0


def _power_joules(rows: list[dict[str, Any]]) -> float | None:
    points = [(float(r["t"]), float(r["power_w"])) for r in rows if _num(r.get("t")) and _num(r.get("power_w"))]
    if len(points) < 2:
        return None
    total = 0.0
    for (t0, p0), (t1, p1) in zip(points, points[1:], strict=False):
        if 0 < t1 - t0 <= MAX_GAP_S:
            total += (t1 - t0) * (p0 + p1) / 2
    return total


def _segments(records: list[dict[str, Any]]) -> list[dict[Any, list[dict[str, Any]]]]:
    """The samples of each attempt (a ``status`` line starts one), per GPU, in time order: only the
    run's GPU where the status line names it (``run_gpu``), every GPU where it does not."""
    segments: list[dict[Any, list[dict[str, Any]]]] = [{}]
    wanted: list[Any] = [None]  # per segment: the run's GPU, None for all
    for rec in records:
        kind = rec.get("kind")
        if kind == "status":
            if segments[-1]:
                segments.append({})
                wanted.append(None)
            gpu = rec.get("run_gpu")
            wanted[-1] = gpu if isinstance(gpu, int) and not isinstance(gpu, bool) else None
        elif kind in (None, "agg") and rec.get("gpu") is not None and _num(rec.get("t")):
            if wanted[-1] is None or rec["gpu"] == wanted[-1]:
                segments[-1].setdefault(rec["gpu"], []).append(rec)
    for seg in segments:
        for rows in seg.values():
            rows.sort(key=lambda r: r["t"])
    return segments


def run_energy(records: list[dict[str, Any]]) -> Energy | None:
    """The energy of the run's GPU (every GPU, for telemetry that does not name it) over every attempt,
    or None when the telemetry has neither counter nor power."""
    joules, sources = 0.0, set()
    for seg in _segments(records):
        for rows in seg.values():
            counted = _counter_joules(rows)
            if counted is not None:
                joules += counted
                sources.add("NVML energy counter")
                continue
            integrated = _power_joules(rows)
            if integrated is not None:
                joules += integrated
                sources.add("power samples")
    if not sources:
        return None
    source = "counter and power samples" if len(sources) > 1 else sources.pop()
    return Energy(joules, source)


def co2_kg(kwh: float | None, grid_g_per_kwh: float | None) -> float | None:
    """The CO2 estimate of ``kwh`` at a grid intensity in g/kWh (None when either is unknown)."""
    if kwh is None or grid_g_per_kwh is None:
        return None
    return kwh * grid_g_per_kwh / 1000.0
