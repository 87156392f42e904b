"""The Windows power plan as ``powercfg /query SCHEME_CURRENT`` prints it, and what it means overnight.

Windows localises every label of that output (``Current AC Power Setting Index`` is
``Index der aktuellen Wechselstromeinstellung`` in German), but not the GUIDs or the hex values:
a setting is found by its GUID, and its current AC and DC values are the last two hex values of
its block (they follow the minimum, maximum and possible values). ``rlpanel doctor`` and the
System tab show the warnings.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

SLEEP_AFTER = "29f6c1db-86da-48c5-9fdb-f2b67b1f44da"      # SUB_SLEEP STANDBYIDLE, seconds, 0 = never
HIBERNATE_AFTER = "9d7815a6-7ee4-497e-8888-515a05f02364"  # SUB_SLEEP HIBERNATEIDLE, seconds, 0 = never
LID_ACTION = "5ca83367-6e45-459f-a27b-476b1d01c936"       # SUB_BUTTONS LIDACTION: 0 nothing, 1 sleep, 2 hibernate, 3 shut down
LID_ACTIONS = {0: "do nothing", 1: "sleep", 2: "hibernate", 3: "shut down"}
_GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_HEX = re.compile(r":\s*0x([0-9a-f]+)\s*$", re.IGNORECASE)
_PLAN = re.compile(r"^\S.*?:\s*([0-9a-f-]{36})\s*\((.*)\)\s*$", re.IGNORECASE)


def parse_query(text: str) -> dict[str, Any]:
    """``{"plan": name, "plan_guid": guid, "settings": {setting guid: (ac, dc)}}`` from powercfg's output."""
    plan = plan_guid = None
    settings: dict[str, tuple[int, int]] = {}
    current: str | None = None
    values: list[int] = []

    def close() -> None:
        if current and len(values) >= 2:
            settings[current] = (values[-2], values[-1])

    for line in text.splitlines():
        if plan is None and (m := _PLAN.match(line.strip())) and not line.startswith(" "):
            plan_guid, plan = m.group(1).lower(), m.group(2).strip()
            continue
        guids = _GUID.findall(line)
        if guids and not _HEX.search(line):  # a subgroup or setting header: a new block
            close()
            current, values = guids[0].lower(), []
        elif (h := _HEX.search(line)) and current:
            values.append(int(h.group(1), 16))
    close()
    return {"plan": plan, "plan_guid": plan_guid, "settings": settings}


def _minutes(seconds: int) -> str:
    return f"{seconds // 3600} h {seconds % 3600 // 60} min" if seconds >= 3600 else f"{seconds // 60} min"


def overnight_warnings(parsed: dict[str, Any]) -> list[str]:
    """What in the active plan would suspend an overnight run on AC power, each with the exact fix."""
    plan = parsed.get("plan") or "the active power plan"
    settings = parsed.get("settings") or {}
    out = []
    sleep_ac = settings.get(SLEEP_AFTER, (0, 0))[0]
    if sleep_ac:
        out.append(f"power plan {plan!r} sleeps after {_minutes(sleep_ac)} on AC power (a running worker asks Windows to "
                   "stay awake, runtime.keep_awake, but nothing does once it ends or with keep_awake off): set "
                   "Sleep > 'When plugged in, PC goes to sleep after' to Never, or run: powercfg /change standby-timeout-ac 0")
    hibernate_ac = settings.get(HIBERNATE_AFTER, (0, 0))[0]
    if hibernate_ac:
        out.append(f"power plan {plan!r} hibernates after {_minutes(hibernate_ac)} on AC power: run "
                   "powercfg /change hibernate-timeout-ac 0")
    lid_ac = settings.get(LID_ACTION, (0, 0))[0]
    if lid_ac:
        out.append(f"closing the lid on AC power makes the machine {LID_ACTIONS.get(lid_ac, 'suspend')} and suspends the "
                   "run (no program can keep it awake): set 'When I close the lid' (plugged in) to Do nothing, or run: "
                   "powercfg /setacvalueindex SCHEME_CURRENT SUB_BUTTONS LIDACTION 0 && powercfg /setactive SCHEME_CURRENT")
    return out


def read_power_plan(platform: str = sys.platform, run: Any = subprocess.run) -> dict[str, Any] | None:
    """The active plan and its overnight warnings (Windows only; ``None`` elsewhere)."""
    if not platform.startswith("win"):
        return None
    try:
        done = run(["powercfg", "/query", "SCHEME_CURRENT"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"powercfg could not be run: {exc}"}
    if done.returncode != 0:
        return {"error": f"powercfg /query failed (exit {done.returncode}): {(done.stderr or '').strip()[:200]}"}
    parsed = parse_query(done.stdout)
    return {"plan": parsed["plan"], "warnings": overnight_warnings(parsed),
            "settings": {k: list(v) for k, v in parsed["settings"].items()}}
