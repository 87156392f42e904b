"""Time left: a run's speed over its last minute, and "4:26 left, done at 03:12".

A progress record's own ``fps`` is the speed of the last interval: 8 to 1,960 steps/s in one PPO
run (a rollout, an update, an evaluation, another program on the machine), and an ETA from it
jumps with it; an average weighted from the first interval on said "37:08 left" of a run that
ended 75 s later. ``SpeedEstimate`` keeps the ``(t, step)`` points of the last ``window_s`` and
its rate is the steps made over that window's time. A run's first seconds (env processes
starting, torch's first update) say little of its speed: there is no rate to reckon a time left from until
the points span ``min_span_s`` (``time_left`` says ``ESTIMATING``). The speed shown meanwhile is ``rate_so_far``:
the steps over the seconds measured so far, or the first progress record's own ``fps`` (the Speed chart draws
those figures from the first record on, so a line saying "measuring speed..." beside a chart at 1,300 steps/s
only read as broken); ``MEASURING`` is left for a run with no figure yet. A long silence (a stop, a suspended laptop) or
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
MEASURING = "measuring speed..."  # no progress record with a speed yet
ESTIMATING = "estimating time left..."  # a speed, but fewer than min_span_s of it


class SpeedEstimate:
    """Steps per second over the last ``window_s`` of ``(step, t)`` points; ``rate`` is None until they span
    ``min_span_s``, ``rate_so_far`` has a figure from the first record with a speed."""

    def __init__(self, window_s: float = WINDOW_S, min_span_s: float = MIN_SPAN_S, gap_s: float = GAP_S):
        self.window_s = window_s
        self.min_span_s = min(min_span_s, window_s)
        self.gap_s = gap_s
        self._points: deque[tuple[float, float]] = deque()
        self._fps: float | None = None  # the newest point's own speed (its record's fps), for a lone point

    @property
    def rate(self) -> float | None:
        if len(self._points) < 2:
            return None
        (t0, step0), (t1, step1) = self._points[0], self._points[-1]
        if t1 - t0 < self.min_span_s:
            return None
        return (step1 - step0) / (t1 - t0)

    @property
    def span_s(self) -> float:
        """The seconds the points span (0 with fewer than two)."""
        return self._points[-1][0] - self._points[0][0] if len(self._points) >= 2 else 0.0

    @property
    def rate_so_far(self) -> float | None:
        """The speed to show: ``rate`` once measured, else the steps over the seconds so far, else the one
        point's own fps (> 0); None before any of these exists."""
        if self.rate is not None:
            return self.rate
        if len(self._points) >= 2:
            (t0, step0), (t1, step1) = self._points[0], self._points[-1]
            return (step1 - step0) / (t1 - t0)  # update keeps times increasing
        return self._fps if self._fps and self._fps > 0 else None

    def reset(self) -> None:
        """Start over (a new attempt of the run)."""
        self._points.clear()
        self._fps = None

    def update(self, step: float, t: float, fps: float | None = None) -> float | None:
        """Take a progress record's step, time and own ``fps`` (its last interval's speed); returns the rate over
        the window."""
        if self._points:
            t_last, step_last = self._points[-1]
            if t <= t_last:
                return self.rate
            if step < step_last or t - t_last > self.gap_s:
                self._points.clear()  # restarted from an earlier step, or paused: measure afresh
        self._points.append((t, step))
        self._fps = fps
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
    """The speed to show: None unless the run is running and some record gave a figure (``rate_so_far``)."""
    return speed.rate_so_far if state == "running" else None


def time_left(speed: SpeedEstimate, remaining: float, state: str | None, now: float) -> str | None:
    """What follows the steps on a progress line: the time left while the run runs, ``MEASURING`` until a record
    gave a speed, ``ESTIMATING`` until that speed spans ``min_span_s``, None when it is not running (the caller
    names its state) or has nothing left."""
    if state != "running":
        return None
    if speed.rate is None:
        return MEASURING if speed.rate_so_far is None else ESTIMATING
    return eta_text(remaining, speed.rate, now)
