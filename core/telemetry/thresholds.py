"""When a GPU reading is close to a limit: the one rule the window (and a thermal guard) asks.

A reading is past its threshold when the temperature is within ``TEMPERATURE_MARGIN_C`` of the
GPU's own slowdown threshold (NVML's ``NVML_TEMPERATURE_THRESHOLD_SLOWDOWN``, where the card
starts to throttle), when memory use reaches ``MEMORY_FRACTION`` of the card, or when power draw
reaches ``POWER_FRACTION`` of the enforced power limit. A limit the driver does not report gives
no threshold (and no alert), never a guessed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

TEMPERATURE_MARGIN_C = 5.0
MEMORY_FRACTION = 0.95
POWER_FRACTION = 0.98


class GpuAlert(NamedTuple):
    """A reading past its threshold: ``field`` is the telemetry key (``temperature_c`` ...)."""

    gpu: int | None
    field: str
    value: float
    threshold: float
    message: str


def warn_levels(sample: Mapping[str, Any]) -> dict[str, float]:
    """The value from which each reading of ``sample`` (a telemetry line) is past its threshold.

    Keys are telemetry fields (``temperature_c``, ``memory_used_bytes``, ``power_w``); a field is
    missing when its limit is unknown.
    """
    levels: dict[str, float] = {}
    slowdown, total, limit = (sample.get(k) for k in ("temperature_slowdown_c", "memory_total_bytes", "power_limit_w"))
    if slowdown:
        levels["temperature_c"] = float(slowdown) - TEMPERATURE_MARGIN_C
    if total:
        levels["memory_used_bytes"] = float(total) * MEMORY_FRACTION
    if limit:
        levels["power_w"] = float(limit) * POWER_FRACTION
    return levels


def gpu_alerts(sample: Mapping[str, Any]) -> list[GpuAlert]:
    """The readings of one telemetry line (or ``GpuSample._asdict()``) past their thresholds."""
    gpu = sample.get("gpu", sample.get("index"))
    name = f"GPU {gpu}" if gpu is not None else "GPU"
    alerts = []
    for field, level in warn_levels(sample).items():
        value = sample.get(field)
        if value is None or float(value) < level:
            continue
        value = float(value)
        if field == "temperature_c":
            slowdown = float(sample["temperature_slowdown_c"])
            text = f"{name} at {value:.0f} °C, within {TEMPERATURE_MARGIN_C:.0f} °C of its slowdown threshold ({slowdown:.0f} °C)"
        elif field == "memory_used_bytes":
            pct = 100.0 * value / float(sample["memory_total_bytes"])
            text = f"{name} memory {pct:.1f} % full (threshold {100 * MEMORY_FRACTION:.0f} %)"
        else:
            pct = 100.0 * value / float(sample["power_limit_w"])
            text = f"{name} power {value:.0f} W, {pct:.1f} % of its {float(sample['power_limit_w']):.0f} W limit"
        alerts.append(GpuAlert(gpu, field, value, level, text))
    return alerts
