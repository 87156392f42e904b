"""The Budget box says the steps a run will really train (whole rollouts) under Timesteps, and rounds the budget
to whole rollouts in one click, down or up."""

from __future__ import annotations

import pytest

from tests.app.configure.helpers import TIMEOUT_MS, new_panel, type_into, wait_settled


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def shown(panel) -> bool:
    return panel.steps_hint.isVisibleTo(panel)


def test_the_budget_box_says_the_steps_it_trains_and_rounds_down_in_one_click(qtbot, panel):
    panel.show()
    panel.select_preset("fast")  # 16 envs x 256 steps: rollouts of 4,096
    type_into(qtbot, panel, "budget.total_timesteps", "33000")
    wait_settled(qtbot, panel)
    hint = panel.steps_hint
    assert shown(panel)
    assert hint.label.text() == "Trains 36,864 steps (whole rollouts of 16\u00a0x\u00a0256)"
    assert [b.text() for b in hint.buttons] == ["Round to 32,768", "Round to 36,864"]
    # it sits right under Timesteps, inside the Budget box
    timesteps = panel.rows["budget.total_timesteps"]
    assert hint.parent() is panel.budget_form
    assert hint.geometry().top() >= timesteps.geometry().bottom()
    hint.buttons[0].click()
    qtbot.waitUntil(lambda: not shown(panel), timeout=TIMEOUT_MS)
    assert panel.current_config().budget.total_timesteps == 32_768
    assert timesteps.text() == "32768" and timesteps.label.font().bold()  # an edit over the preset, as typed


def test_rounding_up_and_the_hint_follows_the_rollout_size(qtbot, panel):
    panel.show()
    panel.select_preset("fast")
    type_into(qtbot, panel, "budget.total_timesteps", "33000")
    wait_settled(qtbot, panel)
    panel.steps_hint.buttons[1].click()
    qtbot.waitUntil(lambda: not shown(panel), timeout=TIMEOUT_MS)
    assert panel.current_config().budget.total_timesteps == 36_864
    type_into(qtbot, panel, "ppo.n_steps", "200")  # 16 x 200 = 3,200 a rollout: 36,864 is no longer whole
    wait_settled(qtbot, panel)
    assert shown(panel)
    assert panel.steps_hint.label.text() == "Trains 38,400 steps (whole rollouts of 16\u00a0x\u00a0200)"
    assert [b.text() for b in panel.steps_hint.buttons] == ["Round to 35,200", "Round to 38,400"]


def test_no_hint_for_a_baseline_or_an_invalid_budget(qtbot, panel):
    panel.show()
    panel.select_preset("fast")
    type_into(qtbot, panel, "budget.total_timesteps", "1000")  # below one rollout: only rounding up is offered
    wait_settled(qtbot, panel)
    assert [b.text() for b in panel.steps_hint.buttons] == ["Round to 4,096"]
    type_into(qtbot, panel, "budget.total_timesteps", "0")
    qtbot.waitUntil(lambda: panel.rows["budget.total_timesteps"].error() is not None, timeout=TIMEOUT_MS)
    assert not shown(panel)
    panel.set_field("budget.total_timesteps", 33_000)
    panel.set_field("algo", "random")
    wait_settled(qtbot, panel)
    assert panel.current_config().is_baseline and not shown(panel)
