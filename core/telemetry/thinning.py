"""Thinning ``telemetry.jsonl``: samples older than an hour become per-second min/max/mean lines.

At 5 Hz a full-rate line is ~330 bytes, so 12 h on one GPU would be ~70 MB; thinned, the peaks
of bursts survive and 12 h stays near 40 MB (see ``core.telemetry.recorder``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from core.util.files import write_atomic
from core.util.jsonl import read_jsonl

NUMERIC = ("memory_used_bytes", "temperature_c", "utilization_pct", "memory_utilization_pct",
           "power_w", "sm_clock_mhz", "fan_pct", "process_memory_bytes", "rss_bytes", "cpu_pct",
           "process_cpu_pct", "host_memory_bytes")
CONSTANT = ("memory_total_bytes", "power_limit_w", "temperature_slowdown_c", "process_memory_source",
            "host_memory_measure")
SOMETIMES = ("host_memory_bytes", "host_memory_measure")  # on some ticks only: a second without them leaves them out
# a bit mask: the second keeps every reason any of its samples had; a counter: the second keeps its last reading
BITS = ("throttle_reasons",)
COUNTERS = ("energy_mj",)


def thin_telemetry(path: Path, older_than_t: float) -> int:
    """Rewrite samples older than unix time ``older_than_t`` as per-second min/max/mean lines.

    Returns how many sample lines were folded. The file is replaced atomically.
    """
    records = read_jsonl(path)
    old = [r for r in records if "kind" not in r and r.get("t", math.inf) < older_than_t]
    if not old:
        return 0
    groups: dict[tuple[int, Any], list[dict[str, Any]]] = {}
    for r in old:
        groups.setdefault((int(r["t"]), r.get("gpu")), []).append(r)
    aggs = [_aggregate(sec, gpu, rows) for (sec, gpu), rows in groups.items()]
    rest = [r for r in records if not ("kind" not in r and r.get("t", math.inf) < older_than_t)]
    merged = sorted(aggs + rest, key=lambda r: (r.get("kind") != "status", r.get("t", 0)))
    write_atomic(path, "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in merged))
    return len(old)


def _or(masks: list[int]) -> int:
    out = 0
    for mask in masks:
        out |= mask
    return out


def _aggregate(second: int, gpu: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
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
    for key in CONSTANT + COUNTERS:
        agg[key] = next((r[key] for r in reversed(rows) if r.get(key) is not None), None)
    for key in BITS:
        masks = [r[key] for r in rows if isinstance(r.get(key), int)]
        agg[key] = _or(masks) if masks else None
    for key in SOMETIMES:
        if agg[key] is None:
            del agg[key]
    return agg
