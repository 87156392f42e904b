"""Time left: a run's speed over its last minute, and "4:26 left, done at 03:12".

A progress record's own ``fps`` is the speed of the last interval: 8 to 1,960 steps/s in one PPO
run (a rollout, an update, an evaluation, another program on the machine), and an ETA from it
jumps with it; an average weighted from the first interval on said "37:08 left" of a run that
ended 75 s later. ``SpeedEstimate`` keeps the ``(t, step)`` points of the last ``window_s`` and
its rate is the steps made over that window's time. A run's first seconds (env processes
starting, torch's first update) say little of its speed: there is no rate until the points span
``min_span_s`` (``time_left`` says ``MEASURING``). A long silence (a stop, a suspended laptop) or
steps going backwards (a resume from an earlier checkpoint, a restart) starts over instead of
averaging the pause in. A run that is not running (stopping, paused, ended) has no rate and no
time left to show. The window's progress bar and ``rlpanel train``'s progress line both use it.
"""

from __future__ import annotations

import math
from collections import deque
from datetime import datetime

from core.util.text import clock

WINDOW_S = 60.0
MIN_SPAN_S = 15.0  # the first rollout and update of a small PPO run take ~5-10 s on a busy 2-core machine
GAP_S = 30.0  # progress comes about once a second; this long without any is a pause, not a slow run
MEASURING = "measuring speed..."


class SpeedEstimate:
    """Steps per second over the last ``window_s`` of ``(step, t)`` points; ``rate`` is None until they span
    ``min_span_s``."""

    def __init__(self, window_s: float = WINDOW_S, min_span_s: float = MIN_SPAN_S, gap_s: float = GAP_S):
        self.window_s = window_s
        self.min_span_s = min(min_span_s, window_s)
        self.gap_s = gap_s
        self._points: deque[tuple[float, float]] = deque()

    @property
    def rate(self) -> float | None:
        if len(self._points) < 2:
            return None
        (t0, step0), (t1, step1) = self._points[0], self._points[-1]
        if t1 - t0 < self.min_span_s:
            return None
        return (step1 - step0) / (t1 - t0)

    def reset(self) -> None:
        """Start over (a new attempt of the run)."""
        self._points.clear()

    def update(self, step: float, t: float) -> float | None:
        """Take a progress record's step and time; returns the rate over the window."""
        if self._points:
            t_last, step_last = self._points[-1]
            if t <= t_last:
                return self.rate
            if step < step_last or t - t_last > self.gap_s:
                self._points.clear()  # restarted from an earlier step, or paused: measure afresh
        self._points.append((t, step))
        # keep one point at or before the window's start, so the window spans window_s once it can
        while len(self._points) > 2 and self._points[1][0] <= t - self.window_s:
            self._points.popleft()
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


def running_rate(speed: SpeedEstimate, state: str | None) -> float | None:
    """The speed to show: None unless the run is running and has measured itself."""
    return speed.rate if state == "running" else None


def time_left(speed: SpeedEstimate, remaining: float, state: str | None, now: float) -> str | None:
    """What follows the steps on a progress line: the time left while the run runs, ``MEASURING`` until it has
    measured its speed, None when it is not running (the caller names its state) or has nothing left."""
    if state != "running":
        return None
    if speed.rate is None:
        return MEASURING
    return eta_text(remaining, speed.rate, now)
