"""Configure panel presets: save, reload, rename/duplicate/delete, broken files, diff."""

from __future__ import annotations

import pytest

from app.configure.panel import ConfigurePanel
from app.configure.preset_diff import PresetDiffDialog
from core.config.errors import ConfigError
from core.util.paths import user_presets_dir
from tests.app.configure.helpers import TIMEOUT_MS, new_panel, type_into, wait_settled


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def names(p: ConfigurePanel) -> list[str]:
    return [p.presets_box.list.item(i).text() for i in range(p.presets_box.list.count())]


def test_saved_user_preset_is_listed_after_a_reload(qtbot, panel):
    panel.select_preset("fast")
    type_into(qtbot, panel, "ppo.n_epochs", "7")
    wait_settled(qtbot, panel)
    panel.presets_box.save_as("my-fast", "fast with 7 epochs")
    assert (user_presets_dir() / "my-fast.yaml").is_file()

    reloaded = ConfigurePanel()
    qtbot.addWidget(reloaded)
    assert "my-fast  (user)" in names(reloaded)
    preset = reloaded.presets_box.presets["my-fast"]
    assert preset.description == "fast with 7 epochs" and preset.error is None
    reloaded.presets_box.list.setCurrentRow(names(reloaded).index("my-fast  (user)"))
    wait_settled(qtbot, reloaded)
    assert reloaded.current_preset() == "my-fast"
    cfg = reloaded.current_config()
    assert cfg.ppo.n_epochs == 7 and cfg.runtime.n_envs == 16  # its own edit and its base's values
    reloaded.model.spaces.wait(TIMEOUT_MS)


def test_save_refuses_builtin_and_existing_names(qtbot, panel):
    with pytest.raises(ConfigError, match="built-in"):
        panel.presets_box.save_as("fast")
    panel.presets_box.save_as("mine")
    with pytest.raises(ConfigError, match="exists"):
        panel.presets_box.save_as("mine")
    panel.presets_box.save_as("mine", "replaced", overwrite=True)
    assert panel.presets_box.presets["mine"].description == "replaced"


def test_duplicate_rename_delete(qtbot, panel, monkeypatch):
    box = panel.presets_box
    box.select("beast")
    monkeypatch.setattr(box, "ask_text", lambda *a: "big")
    box.ask_duplicate()
    assert box.presets["big"].base == "heavy" and box.selected() == "big"
    monkeypatch.setattr(box, "ask_text", lambda *a: "bigger")
    box.ask_rename()
    assert "big" not in box.presets and box.selected() == "bigger" and panel.current_preset() == "bigger"
    monkeypatch.setattr(box, "confirm", lambda *a: False)
    box.ask_delete()
    assert (user_presets_dir() / "bigger.yaml").is_file()  # not confirmed: kept
    monkeypatch.setattr(box, "confirm", lambda *a: True)
    box.ask_delete()
    assert not (user_presets_dir() / "bigger.yaml").exists() and "bigger" not in box.presets
    assert panel.current_preset() is None


def test_broken_user_presets_are_listed_with_their_error_and_left_unchanged(qtbot):
    folder = user_presets_dir()
    folder.mkdir(parents=True, exist_ok=True)
    bad_yaml = folder / "bad-yaml.yaml"
    bad_value = folder / "bad-value.yaml"
    bad_yaml.write_bytes(b"description: oops\nppo: {n_steps: [1, 2\n")
    bad_value.write_bytes(b"description: negative epochs\nalgo: PPO\nppo: {n_epochs: -3}\n")
    before = {p: p.read_bytes() for p in (bad_yaml, bad_value)}

    p = ConfigurePanel()
    qtbot.addWidget(p)
    broken = p.presets_box.broken()
    assert "YAML" in broken["bad-yaml"]
    assert "ppo.n_epochs" in broken["bad-value"] and "-3" in broken["bad-value"]
    assert "bad-value  (user, broken)" in names(p)
    p.presets_box.list.setCurrentRow(names(p).index("bad-value  (user, broken)"))
    assert p.current_preset() is None  # a broken preset is shown, never applied
    assert "n_epochs" in p.presets_box.description.text()
    assert not p.presets_box.buttons["rename"].isEnabled()
    p.presets_box.reload()
    wait_settled(qtbot, p)
    assert {q: q.read_bytes() for q in before} == before
    p.model.spaces.wait(TIMEOUT_MS)


def test_diff_against_base_is_side_by_side(qtbot):
    dialog = PresetDiffDialog("beast")
    qtbot.addWidget(dialog)
    rows = {path: (base, mine) for path, base, mine in dialog.rows()}
    assert rows["ppo.batch_size"] == ("4096", "8192")
    assert rows["runtime.n_envs"] == ("32", "64")
    assert dialog.table.horizontalHeaderItem(1).text() == "heavy"
