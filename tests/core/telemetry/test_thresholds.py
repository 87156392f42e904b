"""The one rule for GPU readings close to a limit (the window colours them; a thermal guard may act)."""

from __future__ import annotations

from core.telemetry.thresholds import gpu_alerts, warn_levels

GIB = 2**30


def line(**readings) -> dict:
    return {"gpu": 0, "temperature_c": 60, "temperature_slowdown_c": 101, "memory_used_bytes": 2 * GIB,
            "memory_total_bytes": 8 * GIB, "power_w": 40.0, "power_limit_w": 115.0, **readings}


def test_readings_well_inside_their_limits_raise_nothing():
    assert gpu_alerts(line()) == []


def test_the_issue_readings_are_each_named_with_their_limit():
    (temp,) = gpu_alerts(line(temperature_c=96))
    assert temp.field == "temperature_c" and temp.threshold == 96.0
    assert temp.message == "GPU 0 at 96 °C, within 5 °C of its slowdown threshold (101 °C)"
    (mem,) = gpu_alerts(line(memory_used_bytes=int(0.97 * 8 * GIB)))
    assert mem.field == "memory_used_bytes" and "97.0 % full" in mem.message
    (power,) = gpu_alerts(line(power_w=0.998 * 115))
    assert power.field == "power_w" and "99.8 % of its 115 W limit" in power.message
    assert [a.field for a in gpu_alerts(line(temperature_c=99, memory_used_bytes=8 * GIB, power_w=115))] == [
        "temperature_c", "memory_used_bytes", "power_w"]


def test_just_below_each_threshold_is_quiet():
    assert gpu_alerts(line(temperature_c=95.9, memory_used_bytes=int(0.949 * 8 * GIB), power_w=0.979 * 115)) == []


def test_an_unknown_limit_gives_no_threshold_not_a_guess():
    sample = line(temperature_slowdown_c=None, power_limit_w=None, temperature_c=120, power_w=500)
    assert set(warn_levels(sample)) == {"memory_used_bytes"}
    assert gpu_alerts(sample) == []
