"""``rlpanel doctor``: the ``windows`` section in ``--json`` (every check's key, null off Windows), and on Windows a line
per check in the text. This machine is Linux: its own report is the first; Windows' answers are then recorded ones."""

from __future__ import annotations

import json
from functools import partial

import core.machine.doctor as doctor
from core.cli.main import main
from core.machine.windows_traps import CHECKS, windows_section
from core.util.long_paths import FILESYSTEM_KEY
from core.util.power_source import read_power_source
from core.util.tdr import GRAPHICS_KEY
from tests.windows_recorded import powershell


def test_off_windows_the_windows_section_is_there_with_nulls_and_prints_nothing(tmp_path, capsys):
    assert main(["doctor", "--runs-dir", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["windows"] == dict.fromkeys(CHECKS)
    assert data["power_source"]["windows"] is False and data["power_source"]["power_mode"] is None
    text = doctor.format_report(data)
    assert not any(line.startswith(("defender", "protected", "long paths", "sysmem", "TDR")) for line in text.splitlines())


def test_on_windows_each_check_has_a_line(tmp_path, capsys, monkeypatch):
    values = {(FILESYSTEM_KEY, None): True, (GRAPHICS_KEY, None): True}
    registry = lambda key, name: values.get((key, name))  # noqa: E731
    monkeypatch.setattr(doctor, "windows_section", partial(windows_section, platform="win32", registry=registry,
                                                           run=powershell("admin_cfa_on.json")))
    monkeypatch.setattr(doctor, "read_power_source", partial(read_power_source, "win32", lambda: None, registry))
    monkeypatch.setattr(doctor, "torch_facts", lambda refresh: {"error": "not probed in this test"})
    assert main(["doctor", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f'Add-MpPreference -ExclusionPath "{tmp_path}"' in out  # the runs folder asked for
    lines = out.splitlines()
    for label in ("defender    ", "protected   ", "long paths  ", "sysmem      ", "TDR         "):
        assert sum(line.startswith(label) for line in lines) == 1, label
    assert "power       no battery (mains power); power mode unknown" in lines  # no PowerSchemes key recorded
