"""The GPU guard's rule with a test clock: hold for 10 s, pause, resume below, memory once per crossing."""

from __future__ import annotations

from core.telemetry.guard import GpuGuard, thermal_limits

GIB = 1 << 30


def guard(pause=85, resume=75, **kw) -> GpuGuard:
    return GpuGuard(0, thermal_limits(True, pause, resume, None, 0), **kw)


def test_pauses_only_after_ten_seconds_at_or_above_the_limit_and_resumes_below_the_resume_temperature():
    g = guard()
    assert g.observe(0, 85, None, None) == [] and not g.paused
    assert g.observe(9.5, 90, None, None) == [] and not g.paused
    events = g.observe(10.0, 86, None, None)
    assert g.paused and [e.code for e in events] == ["thermal_pause"]
    assert "86 C" in g.reason and "85 C" in g.reason and "75 C" in g.reason
    assert g.observe(20, 80, None, None) == [] and g.paused  # between the two limits: still paused
    assert g.observe(30, 75, None, None) == [] and g.paused  # not below 75
    events = g.observe(31, 74, None, None)
    assert not g.paused and events[0].code == "thermal_resume" and "21 s paused" in events[0].message
    assert [e.code for e in g.take_events()] == ["thermal_pause", "thermal_resume"] and g.take_events() == []


def test_a_dip_below_the_limit_starts_the_ten_seconds_again():
    g = guard()
    g.observe(0, 90, None, None)
    g.observe(8, 84, None, None)
    g.observe(9, 90, None, None)
    assert g.observe(18, 90, None, None) == [] and not g.paused
    assert g.observe(19, 90, None, None) and g.paused


def test_no_reading_while_paused_resumes_after_a_while_with_a_warning():
    g = guard(blind_resume_s=30)
    g.observe(0, 90, None, None)
    g.observe(10, 90, None, None)
    assert g.paused
    assert g.observe(30, None, None, None) == [] and g.paused
    events = g.observe(41, None, None, None)
    assert not g.paused and events[0].level == "warning" and "no temperature reading" in events[0].message


def test_memory_warning_once_per_crossing_naming_windows_shared_memory():
    g = guard()
    assert g.observe(0, 50, int(0.94 * 8 * GIB), 8 * GIB) == []
    events = g.observe(1, 50, int(0.96 * 8 * GIB), 8 * GIB)
    assert [e.code for e in events] == ["gpu_memory"]
    assert "96 %" in events[0].message and "Windows" in events[0].message and "shared" in events[0].message
    assert g.observe(2, 50, int(0.99 * 8 * GIB), 8 * GIB) == []  # still above: said once
    assert g.observe(3, 50, int(0.93 * 8 * GIB), 8 * GIB) == []  # not below 90 %: not armed again
    assert g.observe(4, 50, int(0.97 * 8 * GIB), 8 * GIB) == []
    assert g.observe(5, 50, int(0.5 * 8 * GIB), 8 * GIB) == []
    assert len(g.observe(6, 50, 8 * GIB, 8 * GIB)) == 1


def test_limits_from_the_slowdown_threshold_or_the_config():
    auto = thermal_limits(True, None, None, 93, 0)
    assert (auto.pause_c, auto.resume_c) == (88, 78) and "slowdown" in auto.note
    assert thermal_limits(True, 80, None, 93, 0)[:2] == (80, 70)
    assert thermal_limits(True, None, 80, 93, 0)[:2] == (88, 80)
    bad = thermal_limits(True, None, 90, 93, 1)
    assert bad[:2] == (88, 78) and "not below" in bad.note
    off = thermal_limits(True, None, None, None, 1)
    assert off.pause_c is None and "thermal_pause_c" in off.note and "GPU 1" in off.note
    assert thermal_limits(False, 80, 70, 93, 0).pause_c is None
    assert guard(None, None).observe(0, 120, None, None) == []  # off: never pauses


def test_resume_not_below_pause_is_a_config_error_naming_the_field():
    import pytest

    from core.config.errors import ConfigError
    from core.config.validate import validate_config

    with pytest.raises(ConfigError) as err:
        validate_config({"runtime": {"thermal_pause_c": 80, "thermal_resume_c": 85}})
    assert "runtime.thermal_resume_c" in str(err.value) and "below" in str(err.value)
    assert validate_config({"algo": "random", "runtime": {"thermal_pause_c": 80, "thermal_resume_c": 70}}).config
