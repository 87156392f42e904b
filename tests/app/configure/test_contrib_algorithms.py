"""The algorithm box lists what is installed: sb3-contrib's algorithms where it is, and where it is not
(hidden from the import system here), a short line saying where more come from, naming them with
pip install "rlpanel[contrib]" in its tooltip."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt

from app.configure.env_picker import CONTRIB_LINE
from core.config.algorithms.contrib import CONTRIB_FIX
from tests.app.configure.helpers import TIMEOUT_MS, new_panel, wait_settled

CONTRIB = ["TQC", "TRPO", "ARS", "RecurrentPPO", "MaskablePPO", "CrossQ"]


def items(combo) -> list[tuple[str, bool]]:
    model = combo.model()
    return [(combo.itemText(i), model.item(i).isEnabled()) for i in range(combo.count()) if combo.itemText(i)]


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


@pytest.fixture
def panel_without_contrib(qtbot, monkeypatch):
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # find_spec and import both fail, as if not installed
    yield from new_panel(qtbot)


def pick(qtbot, panel, algo: str, env: str) -> None:
    panel.env_picker.id_combo.setEditText(env)
    panel.env_picker.id_combo.activated.emit(0)
    combo = panel.env_picker.algo_combo
    combo.setCurrentText(algo)
    combo.activated.emit(combo.currentIndex())
    wait_settled(qtbot, panel)


def test_installed_contrib_algorithms_are_listed_with_their_forms(qtbot, panel):
    listed = [text for text, enabled in items(panel.env_picker.algo_combo) if enabled]
    assert listed[:12] == ["PPO", "A2C", "SAC", "DQN", "TD3", "DDPG", *CONTRIB]
    assert not any(CONTRIB_FIX in text for text, _ in items(panel.env_picker.algo_combo))
    pick(qtbot, panel, "TQC", "Pendulum-v1")
    qtbot.waitUntil(lambda: panel.current_config() is not None and panel.current_config().algo == "TQC", timeout=TIMEOUT_MS)
    assert panel.forms["tqc"].isVisibleTo(panel) and not panel.forms["sac"].isVisibleTo(panel)
    assert {"tqc.n_quantiles", "tqc.top_quantiles_to_drop_per_net", "tqc.ent_coef"} <= set(panel.rows)
    assert panel.launch_button.isEnabled()
    pick(qtbot, panel, "MaskablePPO", "CartPole-v1")  # CartPole has no action_masks(): refused before launch
    qtbot.waitUntil(lambda: any(i.path == "algo" for i in panel.errors()), timeout=TIMEOUT_MS)
    assert "action_masks()" in panel.env_picker.algo_error.text() and not panel.launch_button.isEnabled()


def test_without_sb3_contrib_the_box_says_how_to_get_its_algorithms(qtbot, panel_without_contrib):
    panel = panel_without_contrib
    combo = panel.env_picker.algo_combo
    listed = items(combo)
    enabled = [text for text, ok in listed if ok]
    assert enabled == ["PPO", "A2C", "SAC", "DQN", "TD3", "DDPG", "random", "constant"]
    [note] = [i for i in range(combo.count()) if combo.itemText(i) and not combo.model().item(i).isEnabled()]
    assert combo.itemText(note) == CONTRIB_LINE  # short: the box is not as wide as the note (issue 41)
    whole = combo.itemData(note, Qt.ItemDataRole.ToolTipRole)  # the whole note on the line
    assert CONTRIB_FIX in whole and all(algo in whole for algo in CONTRIB)
    assert whole == panel.env_picker.contrib_note
    assert CONTRIB_FIX in combo.toolTip()
    raw = panel.current_config().model_dump(mode="json")  # a config from a machine that has sb3-contrib
    raw.update(algo="TQC", env={"id": "Pendulum-v1"})
    panel.load_config(raw)
    qtbot.waitUntil(lambda: any(i.path == "algo" for i in panel.errors()), timeout=TIMEOUT_MS)
    assert CONTRIB_FIX in panel.env_picker.algo_error.text() and not panel.launch_button.isEnabled()
