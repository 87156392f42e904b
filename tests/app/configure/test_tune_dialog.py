"""Tune... in Configure: a real tune on CartPole off the GUI thread, its table filling in, the pick saved as a preset
the list shows at once, "Use this" selecting it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.configure.presets_box import NAME_ROLE
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
    speed, engine = COLUMNS.index("steps/s"), COLUMNS.index("engine")
    assert dialog.table.item(0, speed).text().replace(",", "").isdigit()  # steps/s of the user's own config
    assert [dialog.table.item(i, engine).text() for i in range(len(result.rows))] == [r.engine for r in result.rows]
    assert dialog.table.item(0, engine).text() == "sb3"  # the user's own engine, the baseline
    assert dialog.progress.value() == 100 and "Pick: row" in dialog.status.text()
    assert get_preset("tuned-ppo-cartpole-v1").error is None  # saved, as rlpanel tune does
    picked = dict(result.picked.settings)
    panel.set_field("runtime.n_envs", 7)  # something the pick will overwrite
    with qtbot.waitSignal(dialog.preset_chosen, timeout=5000):  # the pick as saved: the preset
        qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, panel)
    config = panel.current_config()
    assert config is not None and panel.current_preset() == "tuned-ppo-cartpole-v1"
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
        if dialog.table.item(i, COLUMNS.index("steps/s")).text() == "-":
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
    assert table.item(0, 0).text().split()[2] == "cuda" and table.item(0, COLUMNS.index("steps/s")).text() == "-"
    assert table.item(0, fits).text() == "-" and table.item(0, note).text().startswith("cannot run here: torch")
    assert table.item(1, 0).text().split()[2] == "cpu" and table.item(1, fits).text() == "yes"
    assert [table.item(i, 0).text().split()[2] for i in range(table.rowCount())].count("cuda") == 1
    with qtbot.waitSignal(dialog.preset_chosen, timeout=5000):
        qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, panel)
    config = panel.current_config()
    assert config is not None and config.runtime.device == "cpu" and panel.model.errors() == []


class MeasuredTuner:
    """Stands in for core.throughput's Tuner, whose probes train for real (minutes here): the same calls, a measured
    answer at once. What follows is the dialog's own: the preset written to the user's folder, the list, the pick."""

    def __init__(self, config, options, on_row, on_progress, on_machine):
        import threading

        self.on_row, self.cancel_event = on_row, threading.Event()

    def cancel(self) -> None:
        self.cancel_event.set()

    def run(self):
        from core.throughput.table import TuneResult, TuneRow

        rows = [TuneRow({"runtime.n_envs": 1, "runtime.vec_env": "dummy"}, True, steps_per_s=900.0),
                TuneRow({"runtime.n_envs": 4, "runtime.vec_env": "dummy"}, True, steps_per_s=2400.0)]
        for index, row in enumerate(rows):
            self.on_row(index, row)
        return TuneResult(rows, pick=1, stopped="done", baseline=0, machine="this machine (cpu)")


def test_the_tuned_preset_is_listed_at_once_and_use_this_selects_it(qtbot, panel, monkeypatch):
    """Issue 42: a tuned preset was not in the preset list until a restart."""
    import app.configure.tune_dialog as tune_dialog

    monkeypatch.setattr(tune_dialog, "Tuner", MeasuredTuner)
    wait_settled(qtbot, panel)
    _small_cartpole(panel)
    wait_settled(qtbot, panel)
    before = panel.presets_box.selected()
    dialog = panel.open_tune()
    assert "tuned-ppo-cartpole-v1" not in panel.presets_box.presets
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=20_000)
    assert dialog.error is None, dialog.error
    assert "saved as preset tuned-ppo-cartpole-v1" in dialog.status.text()
    listed = [panel.presets_box.list.item(i).data(NAME_ROLE) for i in range(panel.presets_box.list.count())]
    assert "tuned-ppo-cartpole-v1" in listed  # at once, without a restart
    assert panel.presets_box.selected() == before  # listed, not picked: the forms are as they were
    assert "Select preset tuned-ppo-cartpole-v1" in dialog.use_button.toolTip()
    with qtbot.waitSignal(dialog.preset_chosen, timeout=5000):
        qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, panel)
    assert panel.presets_box.selected() == "tuned-ppo-cartpole-v1" == panel.current_preset()
    config = panel.current_config()
    assert config is not None and config.runtime.n_envs == 4 and config.ppo.n_steps == 64  # the pick over your config
    assert panel.state.overrides == {}  # the preset itself, no edits over it
