"""The Presets box's "Import rl_zoo3...": the installed zoo files listed, entries chosen, imported off
the GUI thread, a report line per entry, and the new presets in the list, selected."""

from __future__ import annotations

import pytest

from app.configure.zoo_import import ZooImportDialog
from core.zoo.importer import installed_zoo_files
from tests.app.configure.helpers import TIMEOUT_MS, new_panel, wait_settled

pytestmark = pytest.mark.gui


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def test_import_from_the_installed_zoo_lists_the_presets_and_reports_each_entry(qtbot, panel):
    box = panel.presets_box
    assert box.buttons["zoo"].text() == "Import rl_zoo3\u2026"
    dialog = box.zoo_import_dialog()
    qtbot.addWidget(dialog)
    assert {"ppo", "a2c", "sac", "dqn", "td3", "ddpg"} <= set(installed_zoo_files())
    dialog.source.setCurrentIndex(dialog.source.findText("dqn.yml", flags=_contains()))
    assert dialog.zoo_algo == "dqn" and "CartPole-v1" in dialog.selected_envs()
    for i in range(dialog.entries.count()):
        item = dialog.entries.item(i)
        item.setSelected(item.text() in ("CartPole-v1", "atari"))
    with qtbot.waitSignal(dialog.imported, timeout=TIMEOUT_MS):
        qtbot.mouseClick(dialog.import_button, _left())
    assert [(r.env, r.status) for r in dialog.results] == [("atari", "imported"), ("CartPole-v1", "imported")]
    rows = [dialog.report.topLevelItem(i) for i in range(dialog.report.topLevelItemCount())]
    assert [(r.text(0), r.text(1), r.text(2)) for r in rows] == [
        ("imported", "atari", "zoo-dqn-atari"), ("imported", "CartPole-v1", "zoo-dqn-cartpole-v1")]
    assert rows[0].childCount() == 1 and "no env of its own" in rows[0].child(0).text(3)  # the generic entry warns
    assert dialog.summary.text() == "2 entries: 2 imported exactly, 0 imported with drops, 0 refused"
    assert {"zoo-dqn-atari", "zoo-dqn-cartpole-v1"} <= set(box.presets)
    assert box.selected() == "zoo-dqn-atari"

    box.select("zoo-dqn-cartpole-v1")
    box.preset_selected.emit("zoo-dqn-cartpole-v1")
    wait_settled(qtbot, panel)
    cfg = panel.current_config()
    assert (cfg.algo, cfg.env.id, cfg.dqn.train_freq, cfg.policy.net_arch) == ("DQN", "CartPole-v1", 256, [256, 256])

    for i in range(dialog.entries.count()):  # again, without overwrite: refused by name, nothing replaced
        dialog.entries.item(i).setSelected(dialog.entries.item(i).text() == "CartPole-v1")
    with qtbot.waitSignal(dialog.imported, timeout=TIMEOUT_MS):
        dialog.start_import()
    [again] = dialog.results
    assert again.status == "refused" and "--overwrite" in again.reason
    assert dialog.report.topLevelItem(0).text(3) == again.reason


def test_a_file_with_drops_and_a_bad_file(qtbot, panel, tmp_path):
    path = tmp_path / "a2c.yml"
    path.write_text("Pendulum-v1:\n  n_timesteps: 2000\n  policy: MlpPolicy\n  made_up: 1\n")
    dialog = ZooImportDialog()
    qtbot.addWidget(dialog)
    dialog.set_file(path)
    assert dialog.zoo_algo == "a2c" and dialog.selected_envs() == ["Pendulum-v1"]
    with qtbot.waitSignal(dialog.imported, timeout=TIMEOUT_MS):
        dialog.start_import()
    row = dialog.report.topLevelItem(0)
    assert (row.text(0), row.text(3)) == ("imported-with-drops", "1 dropped")
    assert row.isExpanded() and row.child(0).text(3).startswith("dropped made_up: ")

    bad = tmp_path / "notes.yml"
    bad.write_text("x: 1\n")
    dialog.set_file(bad)
    assert not dialog.import_button.isEnabled() and "cannot tell the algorithm" in dialog.message.text()


def _contains():
    from PySide6.QtCore import Qt

    return Qt.MatchFlag.MatchContains


def _left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def test_a_zoo_lin_schedule_kept_in_a_preset_shows_as_linear(qtbot, panel):
    panel.load_config({"algo": "PPO", "env": {"id": "CartPole-v1"}, "ppo": {"learning_rate": "lin_1e-4"}})
    wait_settled(qtbot, panel)
    editor = panel.rows["ppo.learning_rate"].editor
    assert (editor.kind.currentText(), editor.start.text(), editor.end.text()) == ("linear", "0.0001", "0.0")
    assert editor.end.isVisibleTo(editor) and panel.current_config().ppo.learning_rate.start == 1e-4
