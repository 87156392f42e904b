"""The stopping rules in Configure's Budget: their own rows, explained, refused at the field without periodic evaluation."""

from __future__ import annotations

import pytest

from tests.app.configure.helpers import TIMEOUT_MS, new_panel, type_into, wait_settled

RULES = {"budget.stop_at_reward": "Stop at eval reward", "budget.stop_after_evals_without_improvement": "Stop if no new best in",
         "budget.stop_min_evals": "Count new bests after"}


@pytest.fixture
def panel(qtbot):
    yield from new_panel(qtbot)


def test_rules_have_labelled_rows_and_are_explained_at_the_field(qtbot, panel):
    for path, title in RULES.items():
        row = panel.rows[path]
        assert row.label.text().startswith(title)
        assert f"Path: {path}" in row.label.toolTip()
    assert "Needs Evaluate every" in panel.rows["budget.stop_at_reward"].label.toolTip()
    assert panel.rows["budget.stop_at_reward"].editor.placeholderText() == "never"  # what empty means
    assert panel.rows["budget.stop_after_evals_without_improvement"].unit_label.text() == "evals"
    wait_settled(qtbot, panel)
    type_into(qtbot, panel, "budget.stop_at_reward", "475")  # Evaluate every is 0: nothing would ever stop the run
    row = panel.rows["budget.stop_at_reward"]
    qtbot.waitUntil(lambda: row.error() is not None, timeout=TIMEOUT_MS)
    assert "needs periodic evaluation: set budget.eval_every (Evaluate every)" in row.error()
    assert not panel.launch_button.isEnabled()
    type_into(qtbot, panel, "budget.eval_every", "2,048")
    qtbot.waitUntil(lambda: row.error() is None, timeout=TIMEOUT_MS)
    wait_settled(qtbot, panel)
    cfg = panel.current_config()
    assert cfg is not None and (cfg.budget.stop_at_reward, cfg.budget.eval_every) == (475.0, 2048)
