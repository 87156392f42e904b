"""A preset picked with an env its algorithm cannot train (the first night's step 1: laptop-8gb's SAC on CartPole-v1)
keeps the algorithm shown and the rest of the preset, says so once, and saves nothing invalid for the next start."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QLabel

from app.settings import get_setting, set_setting
from tests.app.configure.helpers import TIMEOUT_MS, new_panel, wait_settled

SAC_REFUSED = "SAC needs a continuous (Box) action space"
KEPT = ("laptop-8gb sets SAC, which needs a continuous (Box) action space; CartPole-v1 has a discrete one: kept PPO; "
        "the rest of laptop-8gb applies")


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def choose_env(qtbot, panel, env: str) -> None:
    """Type an env id and take it, as a user does in the env picker."""
    panel.env_picker.id_combo.setEditText(env)
    panel.env_picker.id_combo.activated.emit(0)
    wait_settled(qtbot, panel)


def click_preset(panel, name: str) -> None:
    """Pick a preset in the list, as a click does."""
    box = panel.presets_box
    row = next(i for i in range(box.list.count()) if box.list.item(i).text().split()[0] == name)
    box.list.setCurrentRow(row)


def shown_texts(panel, text: str) -> list[str]:
    """Every label and error-list line of the panel that holds ``text`` and shows with the panel."""
    labels = [w.text() for w in panel.findChildren(QLabel) if w.isVisibleTo(panel) and text in w.text()]
    errors = panel.errors_list
    listed = [errors.item(i).text() for i in range(errors.count())
              if errors.isVisibleTo(panel) and text in errors.item(i).text()]
    return labels + listed


def test_laptop_8gb_with_cartpole_keeps_ppo_and_the_rest_of_the_preset(qtbot, panel):
    choose_env(qtbot, panel, "CartPole-v1")
    assert panel.env_picker.algo_combo.currentText() == "PPO"
    click_preset(panel, "laptop-8gb")
    wait_settled(qtbot, panel)
    assert panel.current_preset() == "laptop-8gb"
    assert panel.env_picker.algo_combo.currentText() == "PPO"  # not SAC: the preset's, which cannot train CartPole
    cfg = panel.current_config()
    assert cfg is not None and not panel.errors() and panel.launch_button.isEnabled()
    assert (cfg.algo, cfg.env.id) == ("PPO", "CartPole-v1")
    # the rest of the preset applies: its PPO section, its runtime and its target card
    assert (cfg.ppo.n_steps, cfg.ppo.n_epochs, cfg.runtime.tf32, cfg.target_gpu) == (8192, 40, True, "RTX 4060 Laptop")
    assert panel.rows["ppo.n_steps"].text() == "8192"
    assert shown_texts(panel, SAC_REFUSED) == []
    assert shown_texts(panel, "laptop-8gb sets SAC") == [f"Note: {KEPT}"]  # once, in the notes under the fit bar
    assert panel.current_estimate() is not None  # and the fit bar estimates the run it launches
    # an env the preset's algorithm trains: picked again, the preset sets it, with nothing to say
    choose_env(qtbot, panel, "Pendulum-v1")
    click_preset(panel, "fast")
    click_preset(panel, "laptop-8gb")
    wait_settled(qtbot, panel)
    assert panel.current_config().algo == "SAC" and panel.env_picker.algo_combo.currentText() == "SAC"
    assert shown_texts(panel, "laptop-8gb sets") == []


def test_the_note_goes_when_the_user_chooses_the_algorithm(qtbot, panel):
    choose_env(qtbot, panel, "CartPole-v1")
    click_preset(panel, "laptop-8gb")
    wait_settled(qtbot, panel)
    assert shown_texts(panel, "laptop-8gb sets SAC") == [f"Note: {KEPT}"]
    combo = panel.env_picker.algo_combo
    combo.setCurrentText("DQN")
    combo.activated.emit(combo.currentIndex())
    wait_settled(qtbot, panel)
    assert panel.current_config().algo == "DQN" and shown_texts(panel, "laptop-8gb sets SAC") == []


def test_an_algorithm_the_env_refuses_is_said_at_its_field_and_in_the_list_only(qtbot, panel):
    """Chosen by the user (not by a preset): an error, never repeated by the fit bar as its reason for no estimate."""
    choose_env(qtbot, panel, "CartPole-v1")
    combo = panel.env_picker.algo_combo
    combo.setCurrentText("SAC")
    combo.activated.emit(combo.currentIndex())
    wait_settled(qtbot, panel)
    assert not panel.launch_button.isEnabled()
    shown = shown_texts(panel, SAC_REFUSED)
    assert len(shown) == 2 and shown[1].startswith("algo: ")  # beside the algorithm, and in the list of errors
    assert panel.fit_box.detail_label.text() == "fix the errors below to see the estimate"


def test_the_next_start_gets_the_config_that_was_shown(qtbot, make_window):
    window = make_window()
    qtbot.waitUntil(window.started, timeout=TIMEOUT_MS)
    choose_env(qtbot, window.configure, "CartPole-v1")
    click_preset(window.configure, "laptop-8gb")
    wait_settled(qtbot, window.configure)
    window.close()
    saved = json.loads(get_setting("configure/state", ""))
    assert (saved["preset"], saved["overrides"]["env"]["id"], saved["overrides"]["algo"]) == ("laptop-8gb", "CartPole-v1",
                                                                                               "PPO")
    again = make_window()
    qtbot.waitUntil(again.started, timeout=TIMEOUT_MS)
    wait_settled(qtbot, again.configure)
    cfg = again.configure.current_config()
    assert cfg is not None and cfg.algo == "PPO" and again.configure.launch_button.isEnabled()


def test_a_session_saved_with_the_preset_s_algorithm_on_cartpole_comes_back_trainable(qtbot, make_window):
    """What a session saved before this fix holds: laptop-8gb and CartPole-v1, SAC from the preset."""
    set_setting("configure/state", json.dumps({"preset": "laptop-8gb", "overrides": {"env": {"id": "CartPole-v1"}}}))
    window = make_window()
    qtbot.waitUntil(window.started, timeout=TIMEOUT_MS)
    wait_settled(qtbot, window.configure)
    cfg = window.configure.current_config()
    assert cfg is not None and cfg.algo == "PPO"  # laptop-8gb's first algorithm that trains discrete actions
    assert shown_texts(window.configure, "laptop-8gb sets SAC") == [
        "Note: laptop-8gb sets SAC, which needs a continuous (Box) action space; CartPole-v1 has a discrete one: "
        "PPO instead; the rest of laptop-8gb applies"]
