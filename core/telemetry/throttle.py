"""NVML's clock event (throttle) reasons: the bit mask recorded as ``throttle_reasons`` and its names.

The bits are NVML's ``nvmlClocksEventReason*`` constants (the same bits the older
``nvmlClocksThrottleReason*`` names). ``GpuIdle`` is not a slowdown (an idle GPU lowers its
clocks) and neither are the clock settings a user chose; ``SLOWDOWNS`` are the reasons a run is
slower than it could be, drawn on the GPU plots.
"""

from __future__ import annotations

REASONS: dict[int, str] = {
    0x1: "GPU idle",
    0x2: "applications clocks setting",
    0x4: "power cap",
    0x8: "hardware slowdown",
    0x10: "sync boost",
    0x20: "thermal slowdown (software)",
    0x40: "thermal slowdown (hardware)",
    0x80: "power brake (hardware)",
    0x100: "display clock setting",
}
SLOWDOWNS = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


def reason_names(mask: int | None, only: int = ~0) -> list[str]:
    """The names of the bits set in ``mask`` (and in ``only``), lowest bit first; unknown bits by number."""
    if not mask:
        return []
    mask &= only
    names = [name for bit, name in REASONS.items() if mask & bit]
    unknown = mask & ~sum(REASONS)
    if unknown:
        names.append(f"reason bits {unknown:#x}")
    return names


def slowdown(mask: int | None) -> int:
    """The slowdown bits of ``mask`` (0 when none, or when the reading is not available)."""
    return (mask or 0) & SLOWDOWNS
