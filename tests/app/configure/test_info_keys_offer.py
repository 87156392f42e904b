"""The Configure panel's spaces line offers the env's numeric info keys for env.info_keys."""

from __future__ import annotations

from app.configure.model import spaces_text
from core.config.spaces import EnvSpaces


def test_the_spaces_line_names_the_info_keys_to_record():
    spaces = EnvSpaces((2,), "float32", "discrete", (), "int64", n_actions=2, info_keys=("co2_kg", "comfort_pct"))
    assert spaces_text(spaces).endswith("info at episode end: co2_kg, comfort_pct (record them with env.info_keys)")
    assert "info" not in spaces_text(EnvSpaces((2,), "float32", "discrete", (), "int64", n_actions=2))


def test_the_env_picker_edits_env_info_keys_and_offers_the_probed_ones(qtbot):
    from app.configure.env_picker import EnvPicker

    picker = EnvPicker()
    qtbot.addWidget(picker)
    edited = []
    picker.env_edited.connect(edited.append)
    picker.show_env({"entry_point": "my_envs:Building", "kwargs": {}, "info_keys": ["co2_kg", "comfort_pct"]})
    assert picker.measures_edit.text() == "co2_kg, comfort_pct" and not edited
    qtbot.keyClicks(picker.measures_edit, ", solar_util")
    assert edited[-1]["info_keys"] == ["co2_kg", "comfort_pct", "solar_util"]
    picker.show_spaces("discrete actions", ("co2_kg", "energy_kwh"))
    assert picker.measures_edit.placeholderText() == "offered: co2_kg, energy_kwh"
