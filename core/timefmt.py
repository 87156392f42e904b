"""Durations as people read them on a clock: ``4:05``, ``1:02:03`` (progress ETAs, elapsed times)."""

from __future__ import annotations


def clock(seconds: float) -> str:
    """``m:ss`` under an hour, ``h:mm:ss`` from there; negative counts as zero."""
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"
