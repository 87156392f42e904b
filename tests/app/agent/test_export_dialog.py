"""Export policy… (the Runs tab's Agent menu): a real run's policy written by the tool, off the GUI thread, and the
result or the tool's one-line error shown in the dialog."""

from __future__ import annotations

import json

import pytest

from app.agent.export_dialog import ExportDialog
from app.runs.panel import RunsPanel
from tests.training_helpers import copy_run

pytestmark = pytest.mark.gui


@pytest.fixture
def panel(qtbot, runs_dir):
    panel = RunsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.show()
    return panel


def test_export_policy_from_the_agent_menu_writes_the_file_and_shows_the_check(qtbot, panel, trained_run, runs_dir, tmp_path):
    run = copy_run(trained_run, runs_dir)
    panel.refresh()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 1 and not panel._busy, timeout=10_000)
    panel.select(run.name)
    qtbot.waitUntil(panel.agent_button.isEnabled, timeout=5_000)
    assert panel.export_action in panel.agent_button.menu().actions()
    panel.export_action.trigger()
    dialog = panel.findChild(ExportDialog)
    assert dialog is not None and dialog.isVisible()
    # the run keeps steps 512, 768 and 1,024 (no evaluation: no best)
    assert [dialog.checkpoint_box.itemText(i) for i in range(dialog.checkpoint_box.count())] == [
        "last (step 1,024)", "step 768", "step 512"]
    assert dialog.file_edit.text().endswith(f"{run.name}-step1024.onnx") and dialog.check_box.isChecked()
    dialog.checkpoint_box.setCurrentIndex(1)
    dialog.format_box.setCurrentIndex(1)  # TorchScript: the proposed name follows the choices
    assert dialog.file_edit.text().endswith(f"{run.name}-step768.pt")

    output = tmp_path / "agent.pt"
    dialog.file_edit.setText(str(output))
    with qtbot.waitSignal(dialog.exported, timeout=180_000) as done:
        dialog.export_button.click()
        assert not dialog.export_button.isEnabled()  # the window goes on while the tool works
    result = done.args[0]
    assert result["checkpoint_step"] == 768 and result["check"]["mismatches"] == 0
    assert output.is_file() and json.loads((tmp_path / "agent.pt.json").read_text())["torch_version"]
    text = dialog.result_label.text()
    assert str(output) in text and "check: 1,000 observations" in text and "0 differing action(s)" in text

    dialog.file_edit.setText(str(tmp_path / "no-such-folder" / "agent.onnx"))
    with qtbot.waitSignal(dialog.failed, timeout=180_000) as failed:
        dialog.export_button.click()
    assert "does not exist" in failed.args[0]
    assert dialog.result_label.text().startswith("Not exported: -o ") and dialog.export_button.isEnabled()


def test_a_file_without_a_folder_is_refused_in_the_dialog(qtbot, trained_run, runs_dir):
    dialog = ExportDialog(copy_run(trained_run, runs_dir))
    qtbot.addWidget(dialog)
    dialog.file_edit.setText("agent.onnx")
    dialog.export()
    assert dialog.result_label.text() == "Not exported: File: give the whole path of the file, e.g. with Browse…"


def test_an_existing_sidecar_is_replaced_only_when_the_file_was_chosen_and_confirmed(qtbot, trained_run, runs_dir,
                                                                                      tmp_path, monkeypatch):
    """Issue 44: the tool replaced FILE.json without being asked; a typed name is now refused, a file picked with
    Browse… (whose save dialog asks before replacing) is replaced with its sidecar."""
    from PySide6.QtWidgets import QFileDialog

    dialog = ExportDialog(copy_run(trained_run, runs_dir))
    qtbot.addWidget(dialog)
    dialog.check_box.setChecked(False)
    output, side = tmp_path / "agent.onnx", tmp_path / "agent.onnx.json"
    side.write_text('{"mine": true}')
    dialog.file_edit.setText(str(output))
    with qtbot.waitSignal(dialog.failed, timeout=180_000) as failed:
        dialog.export_button.click()
    assert failed.args[0].startswith(f"{side} exists; choose another file or replace it")
    assert side.read_text() == '{"mine": true}' and not output.exists()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(output), ""))
    dialog.choose_file()
    with qtbot.waitSignal(dialog.exported, timeout=180_000):
        dialog.export_button.click()
    assert output.is_file() and json.loads(side.read_text())["format"] == "onnx"
