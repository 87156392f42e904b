"""Time left: a run's speed averaged over the last minutes, and "4:26 left, done at 03:12".

The speed of the last second jumps (an evaluation, a checkpoint, a rollout's update, another
program on the machine), and an ETA from it jumps with it. ``SpeedEstimate`` averages the speed
measured between progress records exponentially over time (the weight of a second falls by
``e`` every ``horizon_s``) and starts unbiased: the first minutes are not pulled towards zero.
A long silence (a stop, a suspended laptop) or steps going backwards (a resume from an earlier
checkpoint, a restart) starts the average again instead of averaging the pause in. The window's
progress bar and ``rlpanel train``'s progress line both use it.
"""

from __future__ import annotations

import math
from datetime import datetime

from core.util.text import clock

HORIZON_S = 120.0
GAP_S = 30.0  # progress comes about once a second; this long without any is a pause, not a slow run


class SpeedEstimate:
    """Steps per second from ``(step, t)`` pairs; ``rate`` is None until two of them are known."""

    def __init__(self, horizon_s: float = HORIZON_S, gap_s: float = GAP_S):
        self.horizon_s = horizon_s
        self.gap_s = gap_s
        self._anchor: tuple[float, float] | None = None
        self._num = 0.0
        self._den = 0.0

    @property
    def rate(self) -> float | None:
        return self._num / self._den if self._den > 0 else None

    def reset(self) -> None:
        """Start over (a new attempt of the run)."""
        self._anchor = None
        self._num = self._den = 0.0

    def update(self, step: float, t: float) -> float | None:
        """Take a progress record's step and time; returns the averaged rate."""
        if self._anchor is None:
            self._anchor = (step, t)
            return self.rate
        step0, t0 = self._anchor
        dt = t - t0
        if dt <= 0:
            return self.rate
        self._anchor = (step, t)
        if step < step0 or dt > self.gap_s:
            self._num = self._den = 0.0  # restarted from an earlier step, or paused: measure afresh
            return self.rate
        keep = math.exp(-dt / self.horizon_s)
        self._num = self._num * keep + (1 - keep) * (step - step0) / dt
        self._den = self._den * keep + (1 - keep)
        return self.rate


def eta_text(remaining: float, rate: float | None, now: float) -> str | None:
    """``4:26 left, done at 03:12`` (the weekday too when it is not today); None without a rate."""
    if rate is None or rate <= 0 or remaining <= 0:
        return None
    seconds = remaining / rate
    if not math.isfinite(seconds) or seconds > 366 * 86400:
        return None
    done = datetime.fromtimestamp(now + seconds)
    when = done.strftime("%H:%M") if done.date() == datetime.fromtimestamp(now).date() else done.strftime("%a %H:%M")
    return f"{clock(seconds)} left, done at {when}"
