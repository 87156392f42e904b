"""Hub… (the Runs tab's Agent menu, issue 46): a real run written as a Hub model folder by the tool, off the GUI
thread; a push without a token says so in the dialog and leaves the folder; bad input is said before anything runs."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from app.agent.hub_dialog import HubDialog
from app.runs.panel import RunsPanel
from tests.training_helpers import copy_run

pytestmark = [pytest.mark.gui, pytest.mark.training]

TOOL_MS = 240_000  # the tool loads torch and SB3, evaluates and records: seconds, more on a busy CI machine


def test_hub_from_the_agent_menu_writes_the_folder_and_says_why_a_push_failed(qtbot, trained_run, runs_dir, tmp_path,
                                                                             monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))  # no token of the machine's user
    run = copy_run(trained_run, runs_dir)
    panel = RunsPanel(runs_dir)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 1 and not panel._busy, timeout=10_000)
    panel.select(run.name)
    actions = {a.text(): a for a in panel.agent_button.menu().actions()}
    actions["Hub…"].trigger()
    dialog = panel.agent_window
    assert isinstance(dialog, HubDialog) and dialog.isVisible() and dialog.run_dir == run
    assert dialog.picker.value() == "last" and dialog.folder_edit.text().endswith(f"{run.name}-hub")

    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    dialog.folder_edit.setText(str(a_file))
    dialog.write_button.click()
    assert dialog.message.text().startswith(f"Not written: -o {a_file}: this is a file") and dialog.write_button.isEnabled()

    folder = tmp_path / "hub"
    dialog.folder_edit.setText(str(folder))
    dialog.picker.setCurrentIndex(dialog.picker.findData("768"))
    dialog.episodes.setValue(2)
    dialog.replay_box.setChecked(False)
    with qtbot.waitSignal(dialog.written, timeout=TOOL_MS) as done:
        dialog.write_button.click()
        assert not dialog.write_button.isEnabled()  # the window goes on while the tool works
    result = done.args[0]
    assert result["checkpoint_step"] == 768 and result["evaluation"]["n_eval_episodes"] == 2
    assert (folder / "ppo-CartPole-v1.zip").is_file() and not (folder / "replay.mp4").exists()
    assert "mean reward" in dialog.message.text() and dialog.open_button.isEnabled()

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)  # replace its files
    dialog.push_edit.setText("me/ppo-CartPole-v1")
    with qtbot.waitSignal(dialog.failed, timeout=TOOL_MS) as failed:
        dialog.write_button.click()
    assert "no Hugging Face token" in failed.args[0] and f"the folder {folder} is written" in failed.args[0]
    assert dialog.message.text().startswith("Not done: --push: no Hugging Face token")
    assert (folder / "README.md").is_file() and dialog.open_button.isEnabled()
    dialog.close()
