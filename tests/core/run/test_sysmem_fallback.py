"""The sysmem-fallback rule on recorded runs (tests/core/run/sysmem_runs.py makes them; its docstring gives the
figures the answers below are worked out from), and on samples for the cases a recording cannot show cheaply."""

from __future__ import annotations

import pytest

from core.run.sysmem_fallback import (
    HOLD_S,
    FallbackFinding,
    FallbackSample,
    SysmemFallbackRule,
    replay,
)
from core.util.jsonl import read_jsonl
from tests.core.run.sysmem_runs import GIB, HERE, MIB, T0, TOTAL

WINDOWS = "win32"


def recorded(case: str, platform: str = WINDOWS) -> FallbackFinding | None:
    folder = HERE / case
    progress = [r for r in read_jsonl(folder / "metrics.jsonl") if r["kind"] == "progress"]
    return replay(progress, read_jsonl(folder / "telemetry.jsonl"), 0, platform)


def test_a_run_whose_card_fills_and_whose_speed_falls_4x_is_found_with_its_two_speeds():
    finding = recorded("climbs_and_crawls")
    # The card is full from the reading at 222.6 s (7.62 GiB of 8); the earlier level is the median of the rolling
    # rates from 60 s (warm-up left out) to then: 1,200 exactly (20 of them include the warm-up's slower seconds).
    # The slowdown starts at 250 s: the rolling rate is exactly 600 with 40 slow seconds in its 60 (not under half),
    # under it from 291 s; 30 s later, at 321 s, all 60 are slow: 300 steps/s. The newest reading then is at 320.6 s.
    assert finding == FallbackFinding(T0 + 291 + HOLD_S, 1200.0, 300.0, int(7.85 * GIB) + 2 * MIB, TOTAL)
    assert finding.message(0) == (
        "Windows is moving GPU memory to system RAM: the run has slowed from 1,200 to 300 steps/s while GPU 0's memory "
        "is at 98 % of its 8.0 GiB. Fix: NVIDIA Control Panel > Manage 3D settings > \"CUDA - Sysmem Fallback Policy: "
        "Prefer No Sysmem Fallback\" (then a run past the card's memory fails at once with out of memory instead of "
        "crawling), or a smaller batch, buffer or network on the GPU")


def test_a_full_card_that_keeps_its_speed_through_an_evaluation_is_not_a_fallback():
    assert recorded("full_keeps_speed") is None


def test_a_run_that_slows_with_memory_well_below_capacity_is_not_a_fallback():
    assert recorded("slows_below_capacity") is None


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_off_windows_the_same_recorded_run_says_nothing(platform):
    """An allocation past the capacity fails there: the slowing is something else."""
    assert recorded("climbs_and_crawls", platform) is None


def feed(rule: SysmemFallbackRule, samples: list[tuple[float, float, float | None]]) -> list[FallbackFinding]:
    """(t, used share of an 8 GiB card, rolling steps/s) samples; the findings they gave."""
    out = []
    for t, share, rate in samples:
        finding = rule.observe(FallbackSample(t, int(share * TOTAL), TOTAL, rate))
        if finding is not None:
            out.append(finding)
    return out


def steady(start: int, end: int, share: float, rate: float | None) -> list[tuple[float, float, float | None]]:
    return [(float(t), share, rate) for t in range(start, end)]


def test_a_single_slow_second_and_a_short_dip_at_capacity_say_nothing_and_a_held_one_says_it_once():
    rule = SysmemFallbackRule()
    samples = steady(0, 200, 0.5, 1000.0) + steady(200, 220, 0.99, 1000.0) + [(220.0, 0.99, 50.0)]
    samples += steady(221, 240, 0.99, 1000.0) + steady(240, 269, 0.99, 400.0)  # 29 s under half: not yet
    samples += steady(269, 280, 0.99, 900.0)
    assert feed(rule, samples) == []
    found = feed(rule, steady(280, 400, 0.99, 400.0))
    assert found == [FallbackFinding(310.0, 1000.0, 400.0, int(0.99 * TOTAL), TOTAL)]  # once, 30 s after 280


def test_no_earlier_level_no_verdict_and_a_card_that_empties_is_measured_again():
    # full from the first minute: no rates before it that are not warm-up, so no earlier level (unknown, said nothing)
    rule = SysmemFallbackRule()
    assert feed(rule, steady(0, 30, 0.5, 1000.0) + steady(30, 400, 0.99, 100.0)) == []
    # the card empties (below 90 %), runs at 1000 for a minute, fills again and the speed halves: found then
    assert feed(rule, steady(400, 460, 0.6, 1000.0) + steady(460, 520, 0.99, 300.0)) == [
        FallbackFinding(490.0, 1000.0, 300.0, int(0.99 * TOTAL), TOTAL)]


def test_a_second_without_a_speed_or_a_reading_is_no_evidence_and_the_hold_starts_again():
    rule = SysmemFallbackRule()
    samples = steady(0, 200, 0.5, 1000.0) + steady(200, 229, 0.99, 100.0)  # 29 s slow at capacity
    samples += [(229.0, 0.99, None)] + steady(230, 250, 0.99, 100.0)  # a gap (the speed measured afresh), 20 s slow
    assert feed(rule, samples) == []
    rule.observe(FallbackSample(250.0, None, None, 100.0))  # NVML did not answer
    assert feed(rule, steady(251, 300, 0.99, 100.0)) == [FallbackFinding(281.0, 1000.0, 100.0, int(0.99 * TOTAL), TOTAL)]
