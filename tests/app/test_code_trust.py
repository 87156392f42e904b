"""Issue 11, point 14 in the window: before the first launch of a config whose env is code from a
module not yet trusted, the window says "this preset runs code from MODULE" and asks; No launches
nothing, Yes is remembered."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from core.config.trust import is_trusted
from core.config.validate import validate_config


def test_launch_asks_before_running_code_from_an_untrusted_module(make_window, runs_dir, monkeypatch):
    window = make_window()
    asked: list[str] = []
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    monkeypatch.setattr(QMessageBox, "question", lambda parent, title, text, *a: (asked.append(text), answers.pop(0))[1])
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text, *a: warned.append(text))
    config = validate_config({"env": {"entry_point": "no_such_envs_mod:Env"}, "algo": "PPO"}).config

    assert window.run_actions.launch(config, preset="gift") is None
    assert asked and "The preset gift runs code from no_such_envs_mod" in asked[0]
    assert list(runs_dir.iterdir()) == [] and not is_trusted("no_such_envs_mod")

    window.run_actions.launch(config, preset="gift")  # yes: trusted, then the launch goes on (and fails: no such module)
    assert is_trusted("no_such_envs_mod")
    assert warned and "No module named 'no_such_envs_mod'" in warned[0]

    asked.clear()
    window.run_actions.confirm_code(config)
    assert not asked, "asked once per module"


def test_a_gymnasium_id_is_not_code(make_window, monkeypatch):
    window = make_window()
    monkeypatch.setattr(QMessageBox, "question", lambda *a: (_ for _ in ()).throw(AssertionError("asked")))
    assert window.run_actions.confirm_code(validate_config({"algo": "PPO"}).config)


def test_the_configure_panel_says_the_preset_runs_code_and_never_probes_it(make_window):
    window = make_window()
    model = window.config
    window.configure.set_field("env", {"id": None, "entry_point": "gift_envs:Grid", "kwargs": {}})
    model.flush()
    assert model.errors() == [], "untrusted code is not an error: Launch asks"
    assert model.spaces_text == "this preset runs code from gift_envs: Launch asks before it runs"
    assert "reading the spaces would run code from gift_envs" in model.estimate_note
    probed = [*model.spaces._pending, *model.spaces._results]
    assert model.settled() and not [k for k in probed if "gift_envs" in k], "its spaces were never read"
    assert model.current_config() is not None
