"""Tune... in Configure: a real tune on CartPole off the GUI thread, its table filling in, "Use this" loads the pick."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.configure.tune_dialog import COLUMNS
from app.threads.background import wait_for_background
from core.config.presets import get_preset
from tests.app.configure.helpers import new_panel, wait_settled

pytestmark = [pytest.mark.gui, pytest.mark.training]
TUNE_MS = 420_000  # a probe starts torch in a fresh process: slow on a loaded 2-core machine


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def _small_cartpole(panel) -> None:
    for path, value in (("ppo.n_steps", 64), ("ppo.n_epochs", 2), ("runtime.torch_threads", 1), ("runtime.device", "cpu")):
        panel.set_field(path, value)


def test_tune_dialog_fills_its_table_and_use_this_loads_the_pick(qtbot, panel):
    wait_settled(qtbot, panel)
    _small_cartpole(panel)
    wait_settled(qtbot, panel)
    qtbot.mouseClick(panel.tune_button, Qt.MouseButton.LeftButton)
    dialog = panel.tune_dialog
    assert dialog is not None and dialog.isVisible()
    assert "PPO on CartPole-v1" in dialog.windowTitle()
    dialog.budget.setValue(20)
    dialog.probe_s = 1.5
    seen_rows = []
    dialog.row_ready.connect(lambda i, row: seen_rows.append(i))
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert dialog.running and dialog.cancel_button.isEnabled() and not dialog.start_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running, timeout=TUNE_MS)
    assert dialog.error is None, dialog.error
    result = dialog.tune_result
    assert result is not None and result.picked is not None and result.picked.fits
    assert seen_rows and dialog.table.rowCount() == len(result.rows)  # rows came while it ran
    assert dialog.table.columnCount() == len(COLUMNS)
    assert dialog.table.item(0, 1).text().replace(",", "").isdigit()  # steps/s of the user's own config
    assert dialog.progress.value() == 100 and "Pick: row" in dialog.status.text()
    assert get_preset("tuned-ppo-cartpole-v1").error is None  # saved, as rlpanel tune does
    picked = dict(result.picked.settings)
    panel.set_field("runtime.n_envs", 7)  # something the pick will overwrite
    with qtbot.waitSignal(dialog.pick_chosen, timeout=5000):
        qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, panel)
    config = panel.current_config()
    assert config is not None
    assert config.runtime.n_envs == picked["runtime.n_envs"] and config.ppo.n_steps == picked["ppo.n_steps"]
    assert config.runtime.vec_env == picked["runtime.vec_env"]


def test_cancel_ends_the_tune_and_its_probe(qtbot, panel):
    wait_settled(qtbot, panel)
    _small_cartpole(panel)
    wait_settled(qtbot, panel)
    dialog = panel.open_tune()
    dialog.budget.setValue(300)
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "probing" in dialog.status.text(), timeout=TUNE_MS)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=120_000)  # the probe's process tree is ended, not waited out
    assert dialog.tune_result is not None and dialog.tune_result.stopped == "cancelled"
    assert dialog.start_button.isEnabled() and not dialog.use_button.isEnabled()
    wait_for_background(10_000)


def test_the_dialog_says_it_tunes_this_machine_not_the_target_gpu_and_no_unmeasured_row_fits(qtbot, panel):
    wait_settled(qtbot, panel)
    _small_cartpole(panel)
    panel.set_field("target_gpu", "RTX 4060 Laptop")  # as the laptop-8gb preset plans: a card this machine does not have
    wait_settled(qtbot, panel)
    dialog = panel.open_tune()
    assert dialog.config.target_gpu == "RTX 4060 Laptop" and not dialog.machine.isVisible()
    dialog.budget.setValue(10)  # the user's config once: the first probe always runs
    dialog.probe_s = 1.0
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(dialog.machine.isVisible, timeout=TUNE_MS)
    text = dialog.machine.text()
    assert text.startswith("Tuned for this machine (cpu") and "not the target GPU RTX 4060 Laptop" in text, text
    qtbot.waitUntil(lambda: not dialog.running, timeout=TUNE_MS)
    assert dialog.error is None, dialog.error
    assert dialog.machine.isVisible() and dialog.machine.text() == text  # still there with the answer
    fits = COLUMNS.index("fits")
    for i in range(dialog.table.rowCount()):
        if dialog.table.item(i, 1).text() == "-":
            assert dialog.table.item(i, fits).text() != "yes"
    assert dialog.table.item(0, 0).text().split()[2] == "cpu" and dialog.table.item(0, fits).text() == "yes"
    assert dialog.status.text().startswith("Pick: row ")


def test_a_cuda_config_on_this_cpu_torch_is_tuned_here_and_use_this_sets_a_device_that_runs(qtbot, panel):
    wait_settled(qtbot, panel)
    _small_cartpole(panel)
    panel.set_field("runtime.device", "cuda")
    wait_settled(qtbot, panel)
    # the test venv's torch is a CPU build: cuda is an error on the field, which a tune answers rather than refuses
    assert panel.current_config() is None and [e.path for e in panel.model.errors()] == ["runtime.device"]
    dialog = panel.open_tune()
    assert dialog is not None
    dialog.budget.setValue(10)
    dialog.probe_s = 1.0
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=TUNE_MS)
    assert dialog.error is None, dialog.error
    table, fits, note = dialog.table, COLUMNS.index("fits"), COLUMNS.index("note")
    assert table.item(0, 0).text().split()[2] == "cuda" and table.item(0, 1).text() == "-"
    assert table.item(0, fits).text() == "-" and table.item(0, note).text().startswith("cannot run here: torch")
    assert table.item(1, 0).text().split()[2] == "cpu" and table.item(1, fits).text() == "yes"
    assert [table.item(i, 0).text().split()[2] for i in range(table.rowCount())].count("cuda") == 1
    with qtbot.waitSignal(dialog.pick_chosen, timeout=5000):
        qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, panel)
    config = panel.current_config()
    assert config is not None and config.runtime.device == "cpu" and panel.model.errors() == []
