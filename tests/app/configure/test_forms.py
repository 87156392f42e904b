"""Configure panel forms: generated from the schema, edits, messages at the field, reset."""

from __future__ import annotations

from typing import Literal

import pytest

from app.configure.forms import SectionForm
from core.config.algorithms.ppo import PPOParams
from core.config.fields import hp
from tests.app.configure.helpers import TIMEOUT_MS, new_panel, type_into, wait_settled


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def test_editing_a_field_changes_the_config(qtbot, panel):
    panel.select_preset("fast")
    wait_settled(qtbot, panel)
    with qtbot.waitSignal(panel.config_changed, timeout=TIMEOUT_MS,
                          check_params_cb=lambda cfg: cfg is not None and cfg.ppo.n_epochs == 25):
        type_into(qtbot, panel, "ppo.n_epochs", "25")
    row = panel.rows["ppo.n_epochs"]
    assert row.label.font().bold() and not row.reset_button.isHidden()
    assert panel.current_config().ppo.n_epochs == 25
    assert panel.current_preset() == "fast"


def test_scientific_notation_and_thousands(qtbot, panel):
    type_into(qtbot, panel, "budget.total_timesteps", "2e6")
    wait_settled(qtbot, panel)
    assert panel.current_config().budget.total_timesteps == 2_000_000
    type_into(qtbot, panel, "ppo.learning_rate", "2.5e-4")
    type_into(qtbot, panel, "budget.checkpoint_every", "25,000")
    wait_settled(qtbot, panel)
    cfg = panel.current_config()
    assert cfg.ppo.learning_rate == 2.5e-4 and cfg.budget.checkpoint_every == 25_000


def test_invalid_value_is_shown_at_the_field_and_disables_launch(qtbot, panel):
    panel.select_preset("fast")  # 16 envs x 256 steps = 4096 per rollout
    wait_settled(qtbot, panel)
    assert panel.launch_button.isEnabled()
    type_into(qtbot, panel, "ppo.n_epochs", "0")  # a field-level range error, with the schema's words
    row = panel.rows["ppo.n_epochs"]
    qtbot.waitUntil(lambda: row.error() is not None, timeout=TIMEOUT_MS)
    assert "greater than or equal to 1" in row.error()
    assert row.error_label.isVisibleTo(panel)
    assert not panel.launch_button.isEnabled()
    assert panel.current_config() is None
    assert [i.path for i in panel.errors()] == ["ppo.n_epochs"]
    assert panel.errors_list.count() == 1 and "Epochs per rollout" in panel.errors_list.item(0).text()
    assert panel.request_launch() is False

    type_into(qtbot, panel, "budget.total_timesteps", "true")  # an integer field refuses a yes/no value
    qtbot.waitUntil(lambda: panel.rows["budget.total_timesteps"].error() is not None, timeout=TIMEOUT_MS)
    assert "not a number" in panel.rows["budget.total_timesteps"].error()

    type_into(qtbot, panel, "ppo.n_epochs", "3")
    type_into(qtbot, panel, "budget.total_timesteps", "1e5")
    qtbot.waitUntil(lambda: panel.launch_button.isEnabled(), timeout=TIMEOUT_MS)
    assert row.error() is None and panel.errors_list.isHidden()


def test_batch_that_does_not_divide_is_a_note_with_a_one_click_fix(qtbot, panel):
    panel.select_preset("fast")  # 16 envs x 256 steps = 4096 per rollout
    type_into(qtbot, panel, "ppo.batch_size", "1000")
    wait_settled(qtbot, panel)
    assert panel.launch_button.isEnabled() and panel.rows["ppo.batch_size"].error() is None  # SB3 accepts it
    qtbot.waitUntil(lambda: len(panel.hints_box.buttons) == 1, timeout=TIMEOUT_MS)
    button = panel.hints_box.buttons[0]
    assert button.text() == "Use 512" and panel.hints_box.isVisibleTo(panel)
    assert panel.warnings_label.isHidden()  # the hint is not repeated as a plain note
    qtbot.mouseClick(button, qtbot_button_left())
    wait_settled(qtbot, panel)
    assert panel.current_config().ppo.batch_size == 512
    assert panel.rows["ppo.batch_size"].text() == "512"
    qtbot.waitUntil(lambda: panel.hints_box.isHidden(), timeout=TIMEOUT_MS)


def test_reset_to_preset_restores_the_value(qtbot, panel):
    panel.select_preset("fast")
    type_into(qtbot, panel, "ppo.n_epochs", "40")
    wait_settled(qtbot, panel)
    assert panel.current_config().ppo.n_epochs == 40
    row = panel.rows["ppo.n_epochs"]
    qtbot.mouseClick(row.reset_button, qtbot_button_left())
    wait_settled(qtbot, panel)
    assert row.text() == "15" and panel.current_config().ppo.n_epochs == 15
    assert row.reset_button.isHidden() and not row.label.font().bold()
    assert panel.state.overrides == {}


def qtbot_button_left():
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def test_a_new_schema_field_appears_in_the_form(qtbot):
    class TunedPPO(PPOParams):
        warmup_steps: int = hp(1000, "Warm-up steps", "Steps before the first update.", "steps", ge=0, le=10**6)
        schedule: Literal["constant", "linear"] = hp("constant", "LR schedule", "How the learning rate changes.")
        log_std_init: float | None = hp(None, "Initial log std", "Start of the policy's log std (empty: SB3's).")

    form = SectionForm(TunedPPO, "ppo", "PPO")
    qtbot.addWidget(form)
    row = form.rows["ppo.warmup_steps"]
    assert row.label.text() == "Warm-up steps"
    assert "Steps before the first update." in row.editor.toolTip() and "0 to 1000000" in row.editor.toolTip()
    assert row.unit_label.text() == "steps"
    assert form.rows["ppo.schedule"].kind.options == ("constant", "linear")
    with qtbot.waitSignal(form.edited, timeout=TIMEOUT_MS) as blocker:
        form.rows["ppo.warmup_steps"].set_text("5e3")
    assert blocker.args == ["ppo.warmup_steps", 5000]
    with qtbot.waitSignal(form.edited, timeout=TIMEOUT_MS) as blocker:
        form.rows["ppo.log_std_init"].set_text("")
    assert blocker.args == ["ppo.log_std_init", None]


def test_net_arch_text_and_load_config(qtbot, panel):
    type_into(qtbot, panel, "policy.net_arch", "pi: 256, 256; vf: 128")
    wait_settled(qtbot, panel)
    assert panel.current_config().policy.net_arch == {"pi": [256, 256], "vf": [128]}

    other = panel.current_config().model_dump(mode="json")
    other["ppo"]["n_steps"] = 128
    other["runtime"]["n_envs"] = 4
    panel.load_config(other)
    wait_settled(qtbot, panel)
    cfg = panel.current_config()
    assert (cfg.ppo.n_steps, cfg.runtime.n_envs) == (128, 4)
    assert panel.rows["runtime.n_envs"].text() == "4" and panel.rows["runtime.n_envs"].label.font().bold()


def test_algorithm_that_does_not_suit_the_env_disables_launch(qtbot, panel):
    wait_settled(qtbot, panel)  # CartPole: discrete actions
    combo = panel.env_picker.algo_combo
    combo.setCurrentText("SAC")
    combo.activated.emit(combo.currentIndex())
    qtbot.waitUntil(lambda: any(i.path == "algo" for i in panel.errors()), timeout=TIMEOUT_MS)
    assert "SAC needs a continuous" in panel.env_picker.algo_error.text()
    assert not panel.launch_button.isEnabled()
    assert panel.forms["sac"].isVisibleTo(panel) and not panel.forms["ppo"].isVisibleTo(panel)

    panel.env_picker.id_combo.setEditText("Pendulum-v1")
    panel.env_picker.id_combo.activated.emit(0)
    qtbot.waitUntil(lambda: panel.current_config() is not None, timeout=TIMEOUT_MS)
    assert panel.current_config().algo == "SAC" and panel.current_config().env.id == "Pendulum-v1"
    assert panel.launch_button.isEnabled()


def test_schedule_editor_sets_a_linear_schedule_and_reads_zoo_text(qtbot, panel):
    row = panel.rows["ppo.learning_rate"]
    editor = row.editor
    assert editor.kind.currentText() == "constant" and not editor.end.isVisibleTo(panel)
    editor.kind.setCurrentText("linear")
    editor.kind.activated.emit(1)  # what choosing "linear" with the mouse does
    assert editor.end.isVisibleTo(panel) and editor.end.text() == "0.0"
    editor.end.setFocus()
    editor.end.selectAll()
    qtbot.keyClicks(editor.end, "1e-5")
    wait_settled(qtbot, panel)
    lr = panel.current_config().ppo.learning_rate
    assert (lr.start, lr.end) == (3e-4, 1e-5)
    row.set_text("lin_7e-4")  # rl_zoo3's spelling: linear from 7e-4 down to 0
    wait_settled(qtbot, panel)
    lr = panel.current_config().ppo.learning_rate
    assert (lr.start, lr.end) == (7e-4, 0.0) and editor.start.text() == "0.0007"
    type_into(qtbot, panel, "ppo.clip_range", "0")  # each value keeps the field's range
    qtbot.waitUntil(lambda: panel.rows["ppo.clip_range"].error() is not None, timeout=TIMEOUT_MS)
    assert "out of range" in panel.rows["ppo.clip_range"].error()


def test_optional_yes_no_setting_is_a_choice_with_the_default_empty(qtbot, panel):
    row = panel.rows["policy.share_features_extractor"]
    assert row.editor.currentText() == "" and [row.editor.itemText(i) for i in range(3)] == ["", "true", "false"]
    row.editor.setCurrentIndex(2)
    row.editor.activated.emit(2)
    wait_settled(qtbot, panel)
    assert panel.current_config().policy.share_features_extractor is False


def test_vector_env_offers_the_lean_and_sb3_subprocess_envs(qtbot, panel):
    row = panel.rows["runtime.vec_env"]
    assert [row.editor.itemText(i) for i in range(row.editor.count())] == ["dummy", "subproc", "subproc-sb3"]
    assert "SubprocVecEnv" in row.editor.toolTip() or "SubprocVecEnv" in row.label.toolTip()
    row.editor.setCurrentIndex(2)
    row.editor.activated.emit(2)
    wait_settled(qtbot, panel)
    assert panel.current_config().runtime.vec_env == "subproc-sb3"


def test_env_picker_edits_wrappers_and_frame_stack(qtbot, panel):
    picker = panel.env_picker
    picker.wrappers_edit.setPlainText("[{TimeLimit: {max_episode_steps: 50}}]")
    picker.frame_stack_edit.setText("3")
    picker.frame_stack_edit.textEdited.emit("3")
    wait_settled(qtbot, panel)
    env = panel.current_config().env
    assert [(w.name, w.kwargs) for w in env.wrappers] == [("gymnasium.wrappers.TimeLimit", {"max_episode_steps": 50})]
    assert env.frame_stack == 3
    qtbot.waitUntil(lambda: "[12]" in picker.spaces_label.text(), timeout=TIMEOUT_MS)  # CartPole's 4 obs x 3 frames


def test_env_picker_sets_the_step_time_limit_which_needs_the_lean_env_processes(qtbot, panel):
    """env.step_timeout_s sits with the env options, in the schema's words; with vec_env dummy it is the env's error."""
    picker = panel.env_picker
    picker.options_toggle.setChecked(True)
    assert picker.step_limit_edit.isVisibleTo(picker) and "Needs runtime.vec_env subproc" in picker.step_limit_edit.toolTip()
    qtbot.keyClicks(picker.step_limit_edit, "30")
    qtbot.waitUntil(lambda: picker.env_error.isVisibleTo(picker), timeout=TIMEOUT_MS)
    assert "set runtime.vec_env: subproc, or clear env.step_timeout_s" in picker.env_error.text()
    assert not panel.launch_button.isEnabled()
    row = panel.rows["runtime.vec_env"]
    row.editor.setCurrentIndex(1)
    row.editor.activated.emit(1)
    qtbot.waitUntil(lambda: panel.launch_button.isEnabled(), timeout=TIMEOUT_MS)
    assert panel.current_config().env.step_timeout_s == 30.0 and picker.env_error.isHidden()
    picker.options_toggle.setChecked(False)
    assert picker.options_toggle.text() == "Env options: step limit 30 s"


def test_a_unit_stands_apart_from_its_field_at_a_laptops_width(qtbot, panel):
    """At 1366x768 the PPO form's editors are short: a unit after a combo's arrow or a field's frame kept its own
    few pixels ("64 ▾transitions" read as one thing when the row took its column's 2 px spacing)."""
    panel.resize(680, 700)
    panel.show()
    qtbot.waitExposed(panel)
    for path in ("ppo.batch_size", "ppo.n_epochs", "ppo.n_steps"):
        row = panel.rows[path]
        unit = row.unit_label
        assert unit.text(), path
        gap = unit.x() + unit.contentsRect().x() - (row.editor.x() + row.editor.width())
        assert gap >= 4, (path, gap)
