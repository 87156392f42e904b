"""The Runs tab's Agent menu on an SBX (JAX) run (issue 45): Evaluate… plays its best checkpoint and shows the run's own
evaluation of it; Export policy… says in the dialog the one line the command line says."""

from __future__ import annotations

import pytest

from app.agent.export_dialog import ExportDialog
from app.runs.panel import RunsPanel
from core.run.evaluations import read_evaluations
from core.util.files import read_json
from tests.training_helpers import copy_run

pytestmark = [pytest.mark.gui, pytest.mark.training]


@pytest.fixture
def panel(qtbot, runs_dir, sbx_trained_run):
    run = copy_run(sbx_trained_run, runs_dir)
    panel = RunsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 1 and not panel._busy, timeout=10_000)
    panel.select(run.name)
    qtbot.waitUntil(panel.agent_button.isEnabled, timeout=5_000)
    return panel


def test_evaluate_on_an_sbx_run_replays_its_best_evaluation(qtbot, panel):
    panel.evaluate_action.trigger()
    dialog = panel.evaluate_dialog
    qtbot.waitExposed(dialog)
    run = dialog.run_dir
    best = read_json(run / "checkpoints" / "best.json")
    dialog.checkpoint.setCurrentIndex(dialog.checkpoint.findData("best"))
    dialog.episodes.setValue(best["eval_episodes"])
    dialog.seed.setValue(best["eval_seed"])
    with qtbot.waitSignal(dialog.evaluated, timeout=120_000) as shown:
        dialog.evaluate_button.click()
    result = shown.args[0]
    assert (result.checkpoint, result.checkpoint_step) == ("best", best["step"])
    assert result.mean_reward == best["mean_reward"] and read_evaluations(run) == [result]
    assert f"{result.mean_reward:,.2f}" in dialog.output.text() and dialog.error is None
    dialog.close()


def test_export_policy_on_an_sbx_run_says_why_not_in_the_dialog(qtbot, panel, tmp_path):
    panel.export_action.trigger()
    dialog = panel.findChild(ExportDialog)
    assert dialog is not None and dialog.isVisible()
    output = tmp_path / "agent.onnx"
    dialog.file_edit.setText(str(output))
    with qtbot.waitSignal(dialog.failed, timeout=120_000) as failed:
        dialog.export_button.click()
    assert "trained with runtime.engine: sbx" in failed.args[0] and "evaluate, watch and record" in failed.args[0]
    assert dialog.result_label.text() == f"Not exported: {failed.args[0]}" and not output.exists()
    assert dialog.export_button.isEnabled()
