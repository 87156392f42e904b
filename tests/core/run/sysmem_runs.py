"""Recorded runs for the sysmem-fallback rule: ``python -m tests.core.run.sysmem_runs`` writes them again.

Each case is a run folder's ``telemetry.jsonl`` (the recorder's lines, every field, one every 2 s, 0.6 s after a progress record:
``runtime.telemetry_hz`` 0.5) and ``metrics.jsonl`` (an attempt, a progress record a second, an episode
every few seconds), in ``data/sysmem/<case>/``. Made to the shape of a real run's files, with figures
chosen so the rule's answer can be worked out by hand (tests/core/run/test_sysmem_fallback.py does):
an 8 GiB laptop card, PPO at 1,200 steps/s once warm (the seconds go 1150, 1250, 1200, 1200: any
60 s window holds exactly 72,000 steps).

- ``climbs_and_crawls``: memory climbs from 5.5 GiB (60 s) to 7.85 GiB (240 s) and stays; from 250 s each
  second trains 290, 310, 300, 300 steps: 4x slower.
- ``full_keeps_speed``: memory at 7.8 GiB (97.5 %) from 200 s; the speed holds but for a 25 s evaluation at
  300 s (no progress records meanwhile, as the recorder writes none while SB3 evaluates).
- ``slows_below_capacity``: memory near 4.2 GiB all along; the same 4x slowdown at 250 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "data" / "sysmem"
T0 = 1795893000.25  # 2026-11-28 (a wall-clock time, as the records keep)
GIB = 1 << 30
MIB = 1 << 20
TOTAL = 8 * GIB
END_S = 420
FAST = (1150, 1250, 1200, 1200)
SLOW = (290, 310, 300, 300)
WARM = (400, 700, 900, 1000)  # the first 20 s: env processes starting, torch's first update
READ_AFTER_S = 0.6  # a telemetry line comes 0.6 s after the progress record of its second (the recorder's own clock)


def climbing(t: int) -> int:
    if t <= 60:
        return int(5.5 * GIB)
    if t < 240:
        return int(5.5 * GIB + (7.85 - 5.5) * GIB * (t - 60) / 180)
    return int(7.85 * GIB) + (t % 3) * MIB


CASES: dict[str, dict[str, Any]] = {
    "climbs_and_crawls": {"memory": climbing, "slow_from": 250, "evaluation": None},
    "full_keeps_speed": {"memory": lambda t: int(5.0 * GIB) if t < 200 else int(7.8 * GIB) + (t % 2) * MIB,
                         "slow_from": None, "evaluation": (300, 325)},
    "slows_below_capacity": {"memory": lambda t: int(4.2 * GIB) + (t % 5) * MIB, "slow_from": 250, "evaluation": None},
}


def steps_in_second(t: int, slow_from: int | None) -> int:
    """The steps trained in the second that ends at ``t``."""
    if t <= 20:
        return WARM[(t - 1) // 5]
    pattern = SLOW if slow_from is not None and t > slow_from else FAST
    return pattern[t % 4]


def telemetry_line(t: int, used: int) -> dict[str, Any]:
    line: dict[str, Any] = {
        "t": round(T0 + t + READ_AFTER_S, 3), "gpu": 0, "memory_used_bytes": used, "memory_total_bytes": TOTAL,
        "temperature_c": 71 + t % 3, "temperature_slowdown_c": 93, "utilization_pct": 64 + t % 7,
        "memory_utilization_pct": 22 + t % 4, "power_w": 58.4, "power_limit_w": 80.0, "sm_clock_mhz": 1695,
        "fan_pct": None, "process_memory_bytes": None, "process_memory_source": None,
        "throttle_reasons": 0, "energy_mj": 1_000_000 + 58_400 * t, "rss_bytes": 2_310_000_000}
    if t % 10 == 0:  # the recorder reads the own memory every few ticks
        line["host_memory_bytes"] = 2_150_000_000
        line["host_memory_measure"] = "private"
    line["cpu_pct"] = 41.5
    line["process_cpu_pct"] = 97.0
    return line


def metrics_lines(case: dict[str, Any]) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [{"kind": "attempt", "t": T0, "step": 0, "attempt": 1}]
    step = 0
    evaluation = case["evaluation"]
    for t in range(1, END_S + 1):
        if evaluation is not None and evaluation[0] < t <= evaluation[1]:
            continue  # SB3 evaluates: no steps, no progress record
        trained = steps_in_second(t, case["slow_from"])
        step += trained
        lines.append({"kind": "progress", "step": step, "t": round(T0 + t, 3), "fps": float(trained),
                      "total": 10_000_000})
        if t % 4 == 0:
            lines.append({"kind": "episode", "step": step, "t": round(T0 + t, 3), "reward": 180.0 + t % 40,
                          "length": 200 + t % 40})
    return lines


def write_cases(root: Path = HERE) -> None:
    for name, case in CASES.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        telemetry = [telemetry_line(t, case["memory"](t)) for t in range(0, END_S + 1, 2)]
        for file, lines in (("telemetry.jsonl", telemetry), ("metrics.jsonl", metrics_lines(case))):
            (folder / file).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


if __name__ == "__main__":
    write_cases()
