"""Numbers and names as people read them: clock durations, ages, byte sizes, safe file names.

One formatter per kind of number, shared by the CLI, the queue and the window.
"""

from __future__ import annotations

import math
import re

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def clock(seconds: float) -> str:
    """``m:ss`` under an hour, ``h:mm:ss`` from there; negative counts as zero (ETAs, elapsed times)."""
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def format_age(seconds: float) -> str:
    """How long ago, to the unit that reads best: ``45 s``, ``12 min``, ``3.5 h``, ``2 d``."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} d"


def format_bytes(n: float | None, missing: str = "n/a", gib_digits: int = 1) -> str:
    """``7.6 GiB`` (``gib_digits`` decimals), ``430 MiB``, ``12 KiB``, ``512 B``; ``missing`` for ``None``."""
    if n is None:
        return missing
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= size:
            return f"{n / size:.{gib_digits}f} {unit}" if unit == "GiB" else f"{n / size:.0f} {unit}"
    return f"{n:.0f} B"


# Names Windows keeps for devices: "con.yaml" or "nul" opens the device, not a file, in any folder.
WINDOWS_DEVICE_NAMES = frozenset({"con", "prn", "aux", "nul", "conin$", "conout$", "clock$",
                                  *(f"com{i}" for i in "123456789¹²³"), *(f"lpt{i}" for i in "123456789¹²³")})


def is_device_name(name: str) -> bool:
    """Whether Windows reads ``name`` (or ``name.anything``) as a device such as ``CON`` or ``COM1``."""
    return name.split(".", 1)[0].strip().rstrip(" .").lower() in WINDOWS_DEVICE_NAMES


def safe_name(text: str, max_len: int = 48) -> str:
    """User text made safe to be part of a file name on every platform: ``[a-z0-9._-]``, no leading
    dot, never a Windows device name (``con`` becomes ``con_``)."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    cleaned = re.sub(r"[-.]{2,}", "-", cleaned).strip("-.")
    cleaned = cleaned[:max_len].strip("-.")
    if is_device_name(cleaned):
        stem, dot, rest = cleaned.partition(".")
        cleaned = f"{stem}_{dot}{rest}"[:max_len + 1]
    return cleaned


def na(value: object, fmt: str = "{}") -> str:
    """``value`` through ``fmt``, or ``n/a`` when it is ``None`` (a reading the device does not give)."""
    return "n/a" if value is None else fmt.format(value)


def significant(value: float, digits: int = 6) -> float:
    """``value`` rounded to ``digits`` significant digits (``7.070183873139369`` -> ``7.07018``); nan and inf as
    they are."""
    if not math.isfinite(value) or value == 0:
        return value
    return float(f"{value:.{digits}g}")


def format_number(value: float, digits: int = 4) -> str:
    """A number as people read it: whole numbers with thousands separators (``328,389,632``), others to
    ``digits`` significant digits (``11.47``, ``0.0003``), those of ``digits`` whole digits or more to the unit
    (``1,687``)."""
    if isinstance(value, int) or (math.isfinite(value) and value == int(value) and abs(value) >= 1):
        return f"{int(value):,}"
    if not math.isfinite(value) or abs(value) < 10 ** (digits - 1):
        return f"{value:.{digits}g}"
    return f"{value:,.0f}"


def format_duration(seconds: float) -> str:
    """A duration: ``0.3 s``, ``45 s`` under a minute, then as a clock (``1:05``, ``2:03:04``)."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 60 else clock(seconds)
