"""Battery or mains, and Windows' power mode, read through an injected battery (psutil's answer) and registry."""

from __future__ import annotations

from collections import namedtuple

from core.util.power_source import SCHEMES_KEY, power_mode, power_source_lines, read_power_source

EFFICIENCY = "961cc777-2547-4f9d-8174-7d86181b8a7a"
PERFORMANCE = "ded574b5-45a0-4f42-8737-46345c09c238"


Battery = namedtuple("Battery", "percent secsleft power_plugged")  # psutil.sensors_battery()'s fields


def battery(percent: float, plugged: bool | None):
    return lambda: Battery(percent, -1, plugged)


def registry(ac: str | None, dc: str | None):
    values = {(SCHEMES_KEY, None): True, (SCHEMES_KEY, "ActiveOverlayAcPowerScheme"): ac,
              (SCHEMES_KEY, "ActiveOverlayDcPowerScheme"): dc}
    return lambda key, name: values.get((key, name))


def test_a_laptop_on_battery_in_efficiency_mode_gets_two_warnings():
    data = read_power_source("win32", battery(63.4, False), registry(PERFORMANCE, EFFICIENCY))
    assert data["on_battery"] is True and data["battery_percent"] == 63 and data["power_mode"] == "Best power efficiency"
    lines = power_source_lines(data)
    assert lines[0] == "power       on battery, battery 63 %; power mode Best power efficiency"
    assert lines[1].startswith("WARNING     this machine runs on battery (63 %)") and "plug in the charger" in lines[1]
    assert lines[2].startswith("WARNING     the power mode (on battery) is Best power efficiency")
    assert lines[2].endswith("set Settings > System > Power & battery > Power mode to Best performance (or Balanced)")


def test_plugged_in_the_ac_mode_is_the_one_in_force():
    data = read_power_source("win32", battery(100, True), registry(PERFORMANCE, EFFICIENCY))
    assert power_source_lines(data) == ["power       plugged in, battery 100 %; power mode Best performance"]
    efficient = read_power_source("win32", battery(100, True), registry("{961CC777-2547-4F9D-8174-7D86181B8A7A}", None))
    assert efficient["power_mode"] == "Best power efficiency"
    assert efficient["warnings"][0].startswith("the power mode (plugged in) is Best power efficiency")


def test_modes_by_guid_absent_is_balanced_and_an_unknown_one_is_named():
    assert power_mode(None) == "Balanced" and power_mode("00000000-0000-0000-0000-000000000000") == "Balanced"
    assert power_mode("381b4222-f694-41f0-9685-ff5bb260df2e") == "Balanced"  # Windows 10's slider
    assert power_mode("3af9b8d9-7c97-431d-ad78-34a8bfea439f") == "unknown (3af9b8d9-7c97-431d-ad78-34a8bfea439f)"
    unreadable = read_power_source("win32", battery(80, True), lambda key, name: None)
    assert unreadable["power_mode"] is None
    assert power_source_lines(unreadable) == ["power       plugged in, battery 80 %; power mode unknown"]


def test_a_desktop_says_no_battery_on_windows_and_nothing_elsewhere():
    desktop = read_power_source("win32", lambda: None, registry(None, None))
    assert power_source_lines(desktop) == ["power       no battery (mains power); power mode Balanced"]
    assert desktop["warnings"] == []
    assert power_source_lines(read_power_source("linux", lambda: None)) == []
    laptop = read_power_source("linux", battery(40, False), registry=lambda *a: 1 / 0)  # no registry off Windows
    assert laptop["power_mode"] is None
    assert power_source_lines(laptop)[0] == "power       on battery, battery 40 %"
    assert len(laptop["warnings"]) == 1


def test_a_battery_that_cannot_be_read_is_said():
    def broken():
        raise OSError("sensors unavailable")

    data = read_power_source("win32", broken, registry(None, None))
    assert data["on_battery"] is None and data["has_battery"] is False
    assert power_source_lines(data)[0] == "power       the battery could not be read: sensors unavailable; power mode Balanced"
    unknown_plug = read_power_source("win32", battery(50, None), registry(None, None))
    assert power_source_lines(unknown_plug)[0] == "power       battery 50 %, charger state unknown; power mode Balanced"
