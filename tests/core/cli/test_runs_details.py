"""``rlpanel runs RUN`` reads like a report: no Python ``None``, no ``[]``, no 16-digit floats, sizes and times in
their units."""

from __future__ import annotations

import re

from core.cli.runs import value_text
from tests.results_helpers import make_result_run
from tests.training_helpers import cli


def test_runs_details_format_numbers_times_and_leave_out_what_is_missing(runs_dir):
    run = make_result_run(runs_dir, "thirds", [1 / 3, 2 / 3, 1.0, 4.0], gpu_peak_bytes=1462 * 2**20)
    base = make_result_run(runs_dir, "base", [0.5], algo="random")
    out = cli("runs", run.name, "--runs-dir", str(runs_dir))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "None" not in text and "[]" not in text and "{}" not in text and "tags:" not in text
    assert not re.search(r"\d\.\d{5,}", text), text  # 1.4618...: printed with all its 16 digits before
    assert "summary.final_mean_reward: 1.5" in text and "summary.final_std_reward: 1.462" in text
    assert re.search(r"^started: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", text, re.M), text
    assert "summary.peak_gpu_memory_bytes: 1.43 GiB" in text
    baseline = cli("runs", base.name, "--runs-dir", str(runs_dir)).stdout
    assert "total:" not in baseline  # a baseline plans no steps: not "total: 0"


def test_value_text_reads_each_kind_of_value():
    assert value_text("wall_time_s", 0.303) == "0.3 s" and value_text("train_time_s", 3725.0) == "1:02:05"
    assert value_text("steps_per_s", 1687.48) == "1,687" and value_text("peak_rss_bytes", 355012608) == "339 MiB"
    assert value_text("final_std_reward", 11.473447607410778) == "11.47" and value_text("episodes", 12345) == "12,345"
    assert value_text("x", None) is None and value_text("x", []) is None and value_text("x", {}) is None
    assert value_text("final_measures", {"co2_kg": 0.123456789, "gone": None}) == "co2_kg 0.1235"
    assert value_text("throttle_reasons", ["hw_slowdown", "sw_thermal"]) == "hw_slowdown, sw_thermal"
    assert value_text("resumed", True) == "yes"
