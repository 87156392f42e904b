"""Doctor's Windows Update lines: the active hours and a pending restart, read through an injected registry."""

from __future__ import annotations

import sys

from core.machine.doctor import format_report
from core.util.winupdate import ACTIVE_HOURS_KEY, REBOOT_KEYS, read_windows_update, restart_hours, windows_update_lines


def registry(values: dict[tuple[str, str | None], object]):
    """A registry as recorded: (key, value name) -> value; (key, None) -> True for a key that exists."""
    asked = []

    def read(key: str, name: str | None):
        asked.append((key, name))
        return values.get((key, name))

    return read, asked


def report_text(windows_update) -> str:
    """The doctor's text for a machine whose torch is not usable (no subprocess), with these Windows Update facts."""
    return format_report({"python": "3.11.7", "executable": "python.exe", "platform": "Windows-11", "user_folder": "U",
                          "runs_dir": "R", "disk_free_bytes": 2**40, "torch": {"error": "none here"},
                          "nvml": {"available": False, "reason": "no driver"}, "power": None,
                          "windows_update": windows_update})


def test_active_hours_by_day_and_a_pending_restart_advise_survive_reboot():
    read, asked = registry({(ACTIVE_HOURS_KEY, "ActiveHoursStart"): 8, (ACTIVE_HOURS_KEY, "ActiveHoursEnd"): 17,
                            (REBOOT_KEYS[1], None): True})
    data = read_windows_update(read, "win32")
    assert data == {"active_hours": [8, 17], "restart_pending": True}
    assert (REBOOT_KEYS[0], None) in asked and (REBOOT_KEYS[1], None) in asked
    lines = report_text(data).splitlines()
    assert ("updates     active hours 08:00-17:00: Windows may restart this machine between 17:00 and 08:00 to finish "
            "installing updates") in lines
    assert ("ADVICE      a queue running between 17:00 and 08:00 may meet a restart: use rlpanel queue run --survive-reboot "
            "(or tick Resume after a restart in the Queue tab)") in lines
    assert any(ln.startswith("WARNING     Windows Update has a restart pending") for ln in lines)


def test_night_owl_hours_need_no_advice_and_unknown_hours_do():
    assert restart_hours(12, 6) == [6, 7, 8, 9, 10, 11]  # active past midnight: restarts come in the morning
    read, _ = registry({(ACTIVE_HOURS_KEY, "ActiveHoursStart"): 12, (ACTIVE_HOURS_KEY, "ActiveHoursEnd"): 6})
    lines = windows_update_lines(read_windows_update(read, "win32"))
    assert lines == ["updates     active hours 12:00-06:00: Windows may restart this machine between 06:00 and 12:00 "
                     "to finish installing updates"]
    unknown = windows_update_lines(read_windows_update(registry({})[0], "win32"))
    assert unknown[0].startswith("updates     active hours unknown") and unknown[1].startswith("ADVICE      ")
    assert len(unknown) == 2  # no restart pending


def test_off_windows_there_are_no_lines():
    read, asked = registry({})
    assert read_windows_update(read, "linux") is None and asked == []
    assert sys.platform.startswith("win") or read_windows_update() is None  # the real registry: Windows only
    assert "updates" not in report_text(None) and "ADVICE" not in report_text(None)
