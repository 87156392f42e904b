"""Evaluate... (issue 26): from the Runs tab's Agent menu, a dialog picks a checkpoint of a real trained run, plays
its episodes in a child process while the window goes on, shows and keeps the result; Cancel ends it at once;
a failure is said in the dialog."""

from __future__ import annotations

import time

import pytest

from app.runs.panel import RunsPanel
from app.threads.background import wait_for_background
from core.run.evaluations import read_evaluations
from core.run.layout import RunDir
from tests.training_helpers import copy_run

pytestmark = [pytest.mark.gui, pytest.mark.training]


@pytest.fixture
def dialog(qtbot, runs_dir, trained_run):
    run = copy_run(trained_run, runs_dir)
    panel = RunsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 1 and not panel._busy, timeout=10_000)
    panel.select(run.name)
    assert panel.agent_button.isEnabled()
    panel.evaluate_action.trigger()
    dialog = panel.evaluate_dialog
    qtbot.waitExposed(dialog)
    yield dialog
    dialog.close()


def _choose(dialog, value: str) -> None:
    dialog.checkpoint.setCurrentIndex(dialog.checkpoint.findData(value))


def test_evaluate_plays_a_chosen_checkpoint_off_the_gui_thread_and_keeps_the_result(qtbot, dialog):
    run = dialog.run_dir
    items = [dialog.checkpoint.itemText(i) for i in range(dialog.checkpoint.count())]
    assert items == ["last (step 1,024)", "step 768", "step 512"]  # no best: no periodic evaluation
    _choose(dialog, "768")
    dialog.episodes.setValue(3)
    dialog.seed.setValue(5)
    started = time.monotonic()
    dialog.evaluate_button.click()
    assert time.monotonic() - started < 1.0  # the click returns at once: the tool runs in a child, waited on elsewhere
    assert dialog.running and dialog.cancel_button.isEnabled() and not dialog.evaluate_button.isEnabled()
    with qtbot.waitSignal(dialog.evaluated, timeout=90_000) as shown:
        pass
    result = shown.args[0]
    assert (result.checkpoint_step, result.episodes, result.deterministic, result.seed) == (768, 3, True, 5)
    assert read_evaluations(run) == [result]
    text = dialog.output.text()
    assert f"{result.mean_reward:,.2f}" in text and "step 768" in text and "3, deterministic actions, seed 5" in text
    assert not dialog.running and dialog.evaluate_button.isEnabled() and dialog.error is None


def test_cancel_ends_the_evaluation_at_once_and_a_failure_is_said_in_the_dialog(qtbot, dialog):
    run = dialog.run_dir
    dialog.episodes.setValue(100_000)
    dialog.evaluate_button.click()
    proc = dialog.proc
    started = time.monotonic()
    dialog.cancel_button.click()
    assert time.monotonic() - started < 1.0 and not dialog.running and dialog.status.text() == "Cancelled."
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=5_000)  # the child is gone, not left to play on
    assert wait_for_background(10_000)
    qtbot.wait(50)
    assert dialog.evaluation is None and dialog.error is None and not RunDir(run).evaluations_file.exists()
    # a checkpoint removed after the dialog listed it: the tool's one line, shown in the dialog
    _choose(dialog, "512")
    RunDir(run).checkpoint_file(512, "model").unlink()
    dialog.episodes.setValue(2)
    dialog.evaluate_button.click()
    qtbot.waitUntil(lambda: dialog.error is not None, timeout=90_000)
    assert "keeps no checkpoint at step 512 (it keeps: 768, 1,024)" in dialog.status.text()
    assert dialog.evaluate_button.isEnabled() and dialog.evaluation is None


def test_a_config_damaged_after_the_dialog_opened_is_said_in_the_dialog(qtbot, dialog):
    """Issue 44: the launch read config.yaml for the run's import folder and raised out of the click (a traceback);
    the tool now says it, as the command line does."""
    run = dialog.run_dir
    RunDir(run).config.write_text("algo: PPO\nenv: {id: CartPole-v1\n")
    dialog.episodes.setValue(1)
    dialog.evaluate_button.click()
    qtbot.waitUntil(lambda: dialog.error is not None, timeout=90_000)
    assert dialog.status.text().startswith(f"run {run.name} cannot be evaluated: cannot read YAML from config.yaml")
    assert "restore its config.yaml" in dialog.status.text()
    assert dialog.evaluate_button.isEnabled() and not RunDir(run).evaluations_file.exists()
