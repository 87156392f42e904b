"""Time left from a speed averaged over minutes, not the last second."""

from __future__ import annotations

from datetime import datetime

import pytest

from core.run.eta import SpeedEstimate, eta_text


def test_a_momentary_dip_barely_moves_the_estimate():
    speed = SpeedEstimate()
    for s in range(300):  # five minutes at 1,000 steps/s, one progress record a second
        speed.update(1000 * s, 1e9 + s)
    assert speed.rate == pytest.approx(1000)
    speed.update(1000 * 299 + 100, 1e9 + 300)  # one slow second (a checkpoint, an evaluation)
    assert speed.rate == pytest.approx(1000, rel=0.01)


def test_the_average_follows_a_lasting_change_within_minutes():
    speed = SpeedEstimate()
    step = 0.0
    for s in range(120):
        speed.update(step, 1e9 + s)
        step += 1000
    for s in range(120, 600):  # the machine got busy: half the speed from here
        speed.update(step, 1e9 + s)
        step += 500
    assert speed.rate == pytest.approx(500, rel=0.05)


def test_the_first_seconds_are_not_pulled_towards_zero():
    speed = SpeedEstimate()
    assert speed.update(0, 100.0) is None  # one record: no speed yet
    assert speed.update(800, 101.0) == pytest.approx(800)


def test_a_pause_or_an_earlier_step_starts_the_average_again():
    speed = SpeedEstimate()
    for s in range(60):
        speed.update(1000 * s, 1e9 + s)
    speed.update(60_000, 1e9 + 3600)  # stopped for an hour, resumed: not a speed of 17 steps/s
    assert speed.rate is None
    speed.update(61_000, 1e9 + 3601)
    assert speed.rate == pytest.approx(1000)
    speed.update(10_000, 1e9 + 3602)  # restarted from an earlier checkpoint
    assert speed.rate is None


def test_eta_text_names_the_time_left_and_the_clock_time_it_ends():
    now = datetime(2026, 11, 22, 2, 0, 0).timestamp()
    assert eta_text(266_000, 1000.0, now) == "4:26 left, done at 02:04"
    assert eta_text(3600 * 1000 * 30, 1000.0, now) == "30:00:00 left, done at Mon 08:00"
    assert eta_text(5000, None, now) is None and eta_text(0, 1000.0, now) is None
