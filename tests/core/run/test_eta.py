"""Time left from the speed over the last minute, not the last second; none before the run has measured itself,
though its speed so far is shown from its first record."""

from __future__ import annotations

from datetime import datetime

import pytest

from core.run.eta import ESTIMATING, MEASURING, SpeedEstimate, eta_text, running_rate, time_left


def test_a_momentary_dip_barely_moves_the_estimate():
    speed = SpeedEstimate()
    for s in range(300):  # five minutes at 1,000 steps/s, one progress record a second
        speed.update(1000 * s, 1e9 + s)
    assert speed.rate == pytest.approx(1000)
    speed.update(1000 * 299 + 100, 1e9 + 300)  # one slow second (a checkpoint, an evaluation)
    assert speed.rate == pytest.approx(1000, rel=0.02)  # one slow second of the minute


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


def test_no_time_left_until_the_run_has_measured_itself_but_a_speed_from_its_first_record():
    speed = SpeedEstimate()
    assert time_left(speed, 10_000, "running", 100.0) == MEASURING  # no record yet
    assert speed.update(0, 100.0, 0.0) is None  # one record at step 0: no figure at all
    assert time_left(speed, 10_000, "running", 100.0) == MEASURING and running_rate(speed, "running") is None
    assert speed.update(8, 101.0, 8.0) is None  # the first second (env start, first rollout) says little of the time
    assert time_left(speed, 10_000, "running", 101.0) == ESTIMATING
    assert running_rate(speed, "running") == pytest.approx(8)  # but the speed so far is shown, as the chart draws it
    for s in range(2, 16):
        speed.update(8 + 1000 * (s - 1), 100.0 + s, 1000.0)
        assert running_rate(speed, "running") == pytest.approx((8 + 1000 * (s - 1)) / s)  # the steps over the seconds
    assert speed.rate == pytest.approx(14_008 / 15)  # 15 s measured: the steps over all of them, not the last second's
    assert "left, done at" in time_left(speed, 10_000, "running", 115.0)


def test_a_lone_first_record_shows_its_own_speed():
    """The worker's first progress record carries the speed since training began; the Speed chart draws it."""
    speed = SpeedEstimate()
    speed.update(1300, 1e9, 1300.0)
    assert running_rate(speed, "running") == pytest.approx(1300)
    assert time_left(speed, 10_000, "running", 1e9) == ESTIMATING
    speed.reset()  # a new attempt: measured afresh
    assert running_rate(speed, "running") is None and time_left(speed, 10_000, "running", 1e9) == MEASURING


def test_the_speed_is_the_steps_over_the_last_minute():
    speed = SpeedEstimate()
    step = 0.0
    for s in range(300):  # 8 to 1,960 steps/s from one second to the next (updates, evaluations): 984 on average
        step += 8 if s % 2 else 1960
        speed.update(step, 1e9 + s)
    assert speed.rate == pytest.approx(984, rel=0.02)
    for s in range(300, 360):  # a minute at 100 steps/s: the first minute no longer counts
        step += 100
        speed.update(step, 1e9 + s)
    assert speed.rate == pytest.approx(100, rel=0.02)


def test_no_speed_or_time_left_once_the_run_is_not_running():
    speed = SpeedEstimate()
    for s in range(60):
        speed.update(1000 * s, 1e9 + s)
    now = 1e9 + 60
    assert running_rate(speed, "running") == pytest.approx(1000) and "left" in time_left(speed, 5000, "running", now)
    for state in ("stopping", "paused", "stopped", "finished", "crashed", None):
        assert running_rate(speed, state) is None and time_left(speed, 5000, state, now) is None


def test_a_pause_or_an_earlier_step_starts_the_average_again():
    speed = SpeedEstimate()
    for s in range(60):
        speed.update(1000 * s, 1e9 + s)
    speed.update(60_000, 1e9 + 3600)  # stopped for an hour, resumed: not a speed of 17 steps/s
    assert speed.rate is None
    for s in range(1, 20):
        speed.update(60_000 + 1000 * s, 1e9 + 3600 + s)
    assert speed.rate == pytest.approx(1000)
    speed.update(10_000, 1e9 + 3620)  # restarted from an earlier checkpoint
    assert speed.rate is None


def test_eta_text_names_the_time_left_and_the_clock_time_it_ends():
    now = datetime(2026, 11, 22, 2, 0, 0).timestamp()
    assert eta_text(266_000, 1000.0, now) == "4:26 left, done at 02:04"
    assert eta_text(3600 * 1000 * 30, 1000.0, now) == "30:00:00 left, done at Mon 08:00"
    assert eta_text(5000, None, now) is None and eta_text(0, 1000.0, now) is None
