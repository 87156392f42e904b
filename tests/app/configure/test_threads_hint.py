"""Under Torch threads the Configure form says what an empty field ("auto") comes to on this machine for the config
as it stands: the count in the placeholder, the why on the line below; a typed count needs no line."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

import core.util.threads
from tests.app.configure.helpers import new_panel, type_into, wait_settled


@pytest.fixture
def panel(qtbot, monkeypatch):
    monkeypatch.setattr(core.util.threads, "usable_cores", lambda: 8)  # the rule's other branch, on any machine
    yield from new_panel(qtbot)


def test_the_torch_threads_field_says_what_auto_is_here_and_follows_the_envs(qtbot, panel):
    panel.show()
    panel.select_preset("fast")  # 16 subprocess envs, one torch thread: the field emptied below
    panel.set_field("runtime.device", "cpu")
    panel.set_field("runtime.torch_threads", None)
    panel.set_field("runtime.vec_env", "subproc")
    type_into(qtbot, panel, "runtime.n_envs", "4")
    wait_settled(qtbot, panel)
    row, hint = panel.rows["runtime.torch_threads"], panel.threads_hint
    assert row.text() == ""
    assert row.editor.placeholderText() == "auto: 4 threads"
    assert hint.isVisibleTo(panel) and hint.text() == "Auto: 4 threads here (8 cores, 4 subprocess envs)"
    assert hint.parent() is panel.forms["runtime"] and hint.geometry().top() >= row.geometry().bottom()  # right below
    panel.set_field("runtime.vec_env", "dummy")  # the envs step in the trainer: every core for torch, at most 8
    wait_settled(qtbot, panel)
    assert hint.text() == "Auto: 8 threads here (8 cores)" and row.editor.placeholderText() == "auto: 8 threads"
    type_into(qtbot, panel, "runtime.torch_threads", "3")  # a count of the user's own: nothing to explain
    wait_settled(qtbot, panel)
    assert not hint.isVisibleTo(panel)
    assert panel.current_config().runtime.torch_threads == 3
    row.editor.selectAll()
    qtbot.keyClick(row.editor, Qt.Key.Key_Backspace)  # emptied again: auto
    wait_settled(qtbot, panel)
    assert hint.isVisibleTo(panel) and hint.text() == "Auto: 8 threads here (8 cores)"
