"""Energy from the telemetry (counter per attempt, else power samples) and throttle reasons through thinning."""

from __future__ import annotations

import json

import pytest

from core.telemetry.energy import co2_kg, run_energy
from core.telemetry.summary import telemetry_summary
from core.telemetry.thinning import thin_telemetry
from core.telemetry.throttle import reason_names, slowdown


def test_the_counter_is_summed_per_attempt_and_a_reset_is_skipped():
    lines = [{"kind": "status", "t": 0},
             *({"t": float(i), "gpu": 0, "energy_mj": 1_000_000 + 50_000 * i, "power_w": 1.0} for i in range(11)),
             {"kind": "status", "t": 100},  # the next attempt: the hour between is not counted
             *({"t": 100.0 + i, "gpu": 0, "energy_mj": 9_000_000 + 50_000 * i} for i in range(5)),
             {"t": 105.0, "gpu": 0, "energy_mj": 10},  # the driver reloaded: the counter starts again
             {"t": 106.0, "gpu": 0, "energy_mj": 50_010}]
    energy = run_energy(lines)
    assert energy.source == "NVML energy counter"
    assert energy.joules == pytest.approx(500 + 200 + 50)  # 50 W over 10 s, 4 s, then 1 s after the reset
    assert energy.kwh == pytest.approx(750 / 3.6e6)
    assert co2_kg(energy.kwh, 400) == pytest.approx(750 / 3.6e6 * 0.4) and co2_kg(energy.kwh, None) is None


def test_power_samples_are_integrated_where_there_is_no_counter_and_gaps_are_skipped():
    lines = [{"t": float(t), "gpu": 0, "power_w": 100.0, "energy_mj": None} for t in (0, 1, 2, 3, 60, 61)]
    energy = run_energy(lines)
    assert energy.source == "power samples" and energy.joules == pytest.approx(400)  # 3 s + 1 s; not the 57 s gap
    assert run_energy([{"t": 1.0, "gpu": 0}]) is None and run_energy([]) is None


def test_thinning_keeps_every_reason_of_a_second_and_the_counters_last_reading(tmp_path):
    path = tmp_path / "telemetry.jsonl"
    lines = [{"t": 0, "kind": "status", "nvml": True, "hz": 5}]
    lines += [{"t": 10 + 0.2 * i, "gpu": 0, "throttle_reasons": [0x1, 0x4, 0x1, 0x40, 0x1][i], "energy_mj": 1000 + i,
               "power_w": 50.0} for i in range(5)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    before = telemetry_summary(path)
    assert before["throttled_s"] == pytest.approx(0.4) and before["throttle_reasons"] == ["power cap",
                                                                                        "thermal slowdown (hardware)"]
    assert thin_telemetry(path, 1e12) == 5
    agg = [json.loads(x) for x in path.read_text().splitlines() if '"agg"' in x]
    assert len(agg) == 1 and agg[0]["throttle_reasons"] == 0x45 and agg[0]["energy_mj"] == 1004
    after = telemetry_summary(path)
    assert after["throttled_s"] == 1.0 and after["throttle_reasons"] == before["throttle_reasons"]


def test_reason_names():
    assert reason_names(0x44) == ["power cap", "thermal slowdown (hardware)"]
    assert reason_names(0x1) == ["GPU idle"] and slowdown(0x1) == 0 and slowdown(None) == 0
    assert reason_names(0x1000) == ["reason bits 0x1000"] and reason_names(None) == []
