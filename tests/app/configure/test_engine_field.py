"""Configure's Engine field (runtime.engine): what SBX cannot run is said at its field, the fit bar says what it
measured, and where sbx is not installed the field's line says what to install.

The Algorithm box keeps every algorithm when sbx is chosen: a user switching the engine keeps the algorithm they
had, and validation names it with the fix (which algorithms SBX trains, or engine sb3), rather than the box
changing their choice under them.
"""

from __future__ import annotations

import sys

import pytest
from PySide6.QtWidgets import QComboBox

from tests.app.configure.helpers import new_panel, wait_settled

MEASURE_MS = 180_000  # the SBX model is built in a child process: jax's first import takes seconds on a loaded machine


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def choose_engine(panel, engine: str) -> None:
    """Pick the engine in its combo as a user does."""
    combo = panel.rows["runtime.engine"].editor
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findText(engine))
    combo.activated.emit(combo.currentIndex())


def test_sbx_with_an_algorithm_it_lacks_names_the_field_and_the_box_keeps_every_algorithm(qtbot, panel):
    panel.set_field("algo", "A2C")
    choose_engine(panel, "sbx")
    wait_settled(qtbot, panel)
    assert panel.state.value("runtime.engine") == "sbx"
    errors = [str(i) for i in panel.errors()]
    assert any(e.startswith("algo: A2C has no SBX (JAX) version; SBX trains PPO, SAC, TD3, DDPG, DQN, TQC or CrossQ")
               for e in errors), errors
    assert "or set runtime.engine: sb3" in panel.env_picker.algo_error.text()
    assert not panel.env_picker.algo_error.isHidden() and panel.current_config() is None
    combo = panel.env_picker.algo_combo
    listed = [combo.itemText(i) for i in range(combo.count())]
    assert {"A2C", "PPO", "SAC", "DQN"} <= set(listed)
    assert panel.engine_hint is not None and panel.engine_hint.isHidden()  # sbx is installed here


def test_the_fit_bar_of_an_sbx_config_says_it_measured_the_sbx_model(qtbot, panel):
    panel.set_field("algo", "PPO")
    panel.set_field("env.id", "CartPole-v1")
    panel.set_field("runtime.device", "cpu")
    choose_engine(panel, "sbx")
    qtbot.waitUntil(panel.model.settled, timeout=MEASURE_MS)
    panel.validate_now()
    assert panel.errors() == []
    estimate = panel.current_estimate()
    assert estimate is not None and estimate.network_source == "measured from the SBX model"
    detail = panel.fit_box.detail_label.text()
    assert detail.startswith("trains on cpu") and "parameters, measured from the SBX model" in detail


def test_without_sbx_the_engine_line_says_what_to_install(qtbot, panel, monkeypatch):
    monkeypatch.setitem(sys.modules, "sbx", None)  # as the plain install: find_spec answers it cannot be imported
    choose_engine(panel, "sbx")
    wait_settled(qtbot, panel)
    hint = panel.engine_hint
    assert hint is not None and not hint.isHidden()
    assert hint.text() == 'sbx (JAX) is not installed here: pip install "rlpanel[jax]"'
    errors = [str(i) for i in panel.errors()]
    assert any(e.startswith("runtime.engine: engine sbx needs the sbx-rl package (JAX)") for e in errors), errors
    assert 'pip install "rlpanel[jax]"' in (panel.rows["runtime.engine"].error() or "")
