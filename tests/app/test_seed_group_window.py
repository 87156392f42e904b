"""Seeds as a group in the window: the Seeds field beside Launch starts a group of real runs (the random
baseline: the cheapest real launch), the Runs tab shows which runs belong together, and the Queue's plan
editor gives a job its seeds."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.queue.plan_editor import COLUMNS as PLAN_COLUMNS
from app.queue.plan_editor import PlanEditor
from app.runs.rows import COLUMNS
from core.queue.plan import PlanJob
from core.run.status import read_status
from core.run.store import load_run_config
from tests.app.configure.helpers import wait_settled

TIMEOUT_MS = 180_000  # two workers start on a loaded 2-core machine


def type_seeds(qtbot, window, text: str) -> None:
    edit = window.configure.seeds_edit
    edit.selectAll()
    qtbot.keyClicks(edit, text)


@pytest.mark.training
def test_the_seeds_field_launches_a_group_and_runs_shows_it(qtbot, make_window, runs_dir):
    window = make_window()
    configure = window.configure
    configure.set_field("algo", "random")
    configure.set_field("budget.episodes", 2)
    wait_settled(qtbot, configure)
    assert configure.launch_button.text() == "Launch" and configure.seeds() is None  # 1: a single run, as before

    type_seeds(qtbot, window, "0")  # said under Launch, naming the field and the fix; Launch is off
    assert not configure.launch_button.isEnabled() and configure.seeds_error.isVisibleTo(configure)
    assert configure.seeds_error.text().startswith("Seeds: 0 runs cannot be launched; give a number of runs (5: seeds 0-4)")
    assert not configure.request_launch() and list(runs_dir.iterdir()) == []

    type_seeds(qtbot, window, "3, 8")
    assert configure.launch_button.isEnabled() and not configure.seeds_error.isVisibleTo(configure)
    assert configure.launch_button.text() == "Launch 2 runs" and "seeds 3, 8" in configure.launch_button.toolTip()
    qtbot.mouseClick(configure.launch_button, Qt.MouseButton.LeftButton)

    message = window.statusBar().currentMessage()
    assert message.startswith("Launched group ") and ": 2 runs of random CartPole-v1 (seeds 3, 8)" in message
    assert window.tabs.currentWidget() is window.runs
    run_dirs = sorted(runs_dir.iterdir())
    assert [d.name[-3:] for d in run_dirs] == ["-s3", "-s8"] and window.run_dir in run_dirs  # the Monitor follows one
    groups = [read_status(d).group for d in run_dirs]
    assert groups[0]["id"] == groups[1]["id"] and message.startswith(f"Launched group {groups[0]['id']}:")
    assert [g["seed"] for g in groups] == [3, 8] and [load_run_config(d).runtime.seed for d in run_dirs] == [3, 8]

    runs = window.runs
    qtbot.waitUntil(lambda: all(read_status(d).state == "finished" for d in run_dirs), timeout=TIMEOUT_MS)
    runs.refresh()
    qtbot.waitUntil(lambda: {i.state for i in runs.infos.values()} == {"finished"} and len(runs.infos) == 2,
                    timeout=30_000)
    col = COLUMNS.index("Group")
    assert not runs.tree.isColumnHidden(col)
    cells = sorted(runs.tree.topLevelItem(i).text(col) for i in range(2))
    assert cells == ["random CartPole-v1 (x2), seed 3", "random CartPole-v1 (x2), seed 8"]
    assert f"group {groups[0]['id']}: 2 runs launched together" in runs.tree.topLevelItem(0).toolTip(col)
    runs.filter_edit.setText(groups[0]["id"])  # the group's id finds its runs
    assert len(runs.visible_ids()) == 2


def test_the_plan_editor_gives_a_job_its_seeds(qtbot):
    editor = PlanEditor()
    qtbot.addWidget(editor)
    editor.add_job(PlanJob(name="base", algo="random", env="CartPole-v1", episodes=2))
    editor.select("base")
    seeds_col = PLAN_COLUMNS.index("Seeds")
    assert editor.table.topLevelItem(0).text(seeds_col) == ""
    editor.seeds_edit.setText("5")
    editor.seeds_edit.editingFinished.emit()
    assert editor.jobs[0].seeds == 5 and editor.table.topLevelItem(0).text(seeds_col) == "5 (0-4)"
    assert editor.plan_raw()["jobs"][0]["seeds"] == 5
    assert not editor.set_seeds("base", "2,2")
    assert editor.message.text() == "base: seeds: seed 2 is given twice: each run of a group needs its own seed"
    assert editor.jobs[0].seeds == 5  # a bad value changes nothing
    assert editor.set_seeds("base", "3,7,11") and editor.table.topLevelItem(0).text(seeds_col) == "3, 7, 11"
    assert editor.seeds_edit.text() == "3,7,11"
    assert editor.set_seeds("base", "") and editor.jobs[0].seeds is None and editor.message.text() == "base runs once"
