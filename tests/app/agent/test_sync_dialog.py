"""Sync… (the Runs tab's Agent menu): a real run copied into a real SQLite MLflow store by rlpanel sync, off the GUI
thread; the fields follow the tracker, and a refusal is the command's one line."""

from __future__ import annotations

import pytest

from app.agent.sync_dialog import SyncDialog, sync_args
from app.runs.panel import RunsPanel
from core.sync.settings import default_mlflow_uri, load_sync_settings
from tests.core.sync.helpers import reward_records
from tests.training_helpers import copy_run

pytestmark = pytest.mark.gui
mlflow = pytest.importorskip("mlflow")


def test_sync_from_the_agent_menu_sends_the_run_to_mlflow_and_remembers_it(qtbot, trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    panel = RunsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 1 and not panel._busy, timeout=10_000)
    panel.select(run.name)
    qtbot.waitUntil(panel.agent_button.isEnabled, timeout=5_000)
    assert panel.sync_action in panel.agent_button.menu().actions() and panel.sync_action.text() == "Sync…"
    panel.sync_action.trigger()
    dialog = panel.findChild(SyncDialog)
    assert dialog is not None and dialog.isVisible()
    assert dialog.uri_edit.isVisible() and not dialog.project_edit.isVisible()
    assert dialog.uri_edit.placeholderText() == default_mlflow_uri(runs_dir)
    dialog.target_box.setCurrentIndex(1)  # W&B: its own fields
    assert dialog.project_edit.isVisible() and dialog.online_box.isVisible() and not dialog.uri_edit.isVisible()
    dialog.target_box.setCurrentIndex(0)
    dialog.experiment_edit.setText("from-the-window")
    dialog.remember_box.setChecked(True)
    with qtbot.waitSignal(dialog.synced, timeout=180_000) as done:
        dialog.sync_button.click()
        assert not dialog.sync_button.isEnabled()  # the window goes on while the command works
    result = done.args[0]["runs"][0]
    client = mlflow.MlflowClient(tracking_uri=default_mlflow_uri(runs_dir))
    assert client.get_experiment_by_name("from-the-window") is not None
    assert len(client.get_metric_history(result["tracker_run_id"], "reward")) == reward_records(run)
    assert dialog.message.text().startswith("Synced: ") and "mlflow ui --backend-store-uri sqlite:///" in dialog.message.text()
    assert load_sync_settings().mlflow.experiment == "from-the-window", "Remember wrote sync.yaml"
    later = SyncDialog(run)
    qtbot.addWidget(later)
    assert later.experiment_edit.text() == "from-the-window", "the next dialog starts from it"

    dialog.uri_edit.setText("nosuchscheme://x")  # MLflow refuses it: the command's line, in the dialog
    with qtbot.waitSignal(dialog.failed, timeout=180_000) as failed:
        dialog.sync_button.click()
    assert "nosuchscheme" in failed.args[0] and dialog.message.text().startswith("Not synced: ")
    assert dialog.sync_button.isEnabled()
    assert load_sync_settings().mlflow.uri is None, "a URI that was refused is not remembered"


def test_the_dialog_s_choices_are_the_command_s_options(tmp_path):
    run = tmp_path / "runs" / "r1"
    assert sync_args(run, "wandb", name="p", folder="/w", online=True, follow=True) == [
        "sync", "r1", "--runs-dir", str(tmp_path / "runs"), "--to", "wandb", "--json", "--project", "p", "--dir", "/w",
        "--online", "--follow"]
    assert sync_args(run, "mlflow", uri="http://h:5000", name="e", remember=True)[6:] == [
        "--json", "--uri", "http://h:5000", "--experiment", "e", "--remember"]
