"""The Queue panel: build a plan from the Configure tab, start it, watch it, re-attach, continue."""

from __future__ import annotations

import time

import pytest
import yaml
from PySide6.QtCore import Qt

from app.queue.panel import QueuePanel
from app.queue.plan_editor import COLUMNS
from core.queue.control import start_queue
from core.queue.plan import PlanJob, parse_plan
from core.queue.state import new_state, read_queue, write_queue
from core.run.names import read_run_label
from tests.app.configure.helpers import new_panel, wait_settled
from tests.training_helpers import TEST_VEC_ENV, lean_jobs

TIMEOUT_MS = 120_000  # a worker imports torch and SB3 on a loaded 2-core machine


@pytest.fixture
def configure(qtbot):
    yield from new_panel(qtbot)


def make_panel(qtbot, runs_dir, configure=None) -> QueuePanel:
    panel = QueuePanel(runs_dir, configure.model if configure is not None else None)
    qtbot.addWidget(panel)
    panel.resize(1000, 720)
    panel.editor.ask_job_name = lambda default: default  # accept the suggested name, as pressing OK would
    return panel


def rows(panel: QueuePanel) -> dict[str, dict[str, str]]:
    """The status view as a user reads it: job -> column -> text."""
    tree = panel.status_view.tree
    cols = [tree.headerItem().text(c) for c in range(tree.columnCount())]
    return {tree.topLevelItem(i).text(0): {c: tree.topLevelItem(i).text(n) for n, c in enumerate(cols)}
            for i in range(tree.topLevelItemCount())}


def ended(panel: QueuePanel) -> bool:
    panel.refresh()
    return bool(panel.state) and panel.state.state not in ("running", "cancelling")


def tiny_plan(*names: str):
    return parse_plan(lean_jobs({"jobs": [{"name": n, "algo": "random", "env": "CartPole-v1", "episodes": 5} for n in names]}))


def test_jobs_from_the_configure_tab_keep_preset_and_changes_readable(qtbot, runs_dir, configure, tmp_path):
    wait_settled(qtbot, configure)
    configure.select_preset("fast")
    configure.set_field("algo", "A2C")
    configure.set_field("budget.total_timesteps", 500)
    configure.set_field("a2c.n_steps", 8)
    wait_settled(qtbot, configure)
    panel = make_panel(qtbot, runs_dir, configure)
    editor = panel.editor
    assert editor.add_current_config() and editor.add_baseline() and editor.add_baseline()
    assert editor.names() == ["a2c-CartPole-v1", "base-CartPole-v1", "base-CartPole-v1-2"]
    job = editor.jobs[0]
    assert (job.preset, job.algo, job.env, job.timesteps, job.set) == ("fast", "A2C", "CartPole-v1", 500, {"a2c.n_steps": 8})
    assert job.config() == configure.current_config().model_copy(update={"name": "a2c-CartPole-v1"})
    assert editor.jobs[1].algo == "random" and editor.jobs[1].episodes == 20

    # reorder, then "after" by ticking in the list, as a user does
    editor.select("base-CartPole-v1")
    qtbot.mouseClick(editor.up_button, Qt.MouseButton.LeftButton)
    assert editor.names()[0] == "base-CartPole-v1"
    editor.select("a2c-CartPole-v1")
    tick = editor.after_list.findItems("base-CartPole-v1", Qt.MatchFlag.MatchExactly)[0]
    tick.setCheckState(Qt.CheckState.Checked)
    assert editor.jobs[1].after == ["base-CartPole-v1"]
    assert editor.table.topLevelItem(1).text(COLUMNS.index("After")) == "base-CartPole-v1"
    editor.parallel.setValue(2)
    editor.on_failure.setCurrentText("stop")

    # Save, load back into a new panel: the same plan; the file is readable YAML
    assert editor.save(tmp_path / "night.yaml")
    text = (tmp_path / "night.yaml").read_text()
    assert "a2c.n_steps: 8" in text and "after: [base-CartPole-v1]" in text
    other = make_panel(qtbot, runs_dir)
    assert other.editor.load(tmp_path / "night.yaml")
    assert other.editor.plan_raw() == editor.plan_raw()
    assert other.editor.saved_path() == tmp_path / "night.yaml"

    # removing a job drops it from the others' after
    editor.select("base-CartPole-v1")
    qtbot.mouseClick(editor.remove_button, Qt.MouseButton.LeftButton)
    assert editor.names() == ["a2c-CartPole-v1", "base-CartPole-v1-2"] and editor.jobs[0].after == []


def test_a_bad_plan_is_refused_naming_job_and_field(qtbot, runs_dir, tmp_path):
    panel = make_panel(qtbot, runs_dir)
    assert not panel.start() and "no jobs" in panel.errors()[0]
    panel.editor.add_job(PlanJob(name="base", algo="random", env="Pendulum-v1", episodes=5))
    panel.editor.add_job(PlanJob(name="sac", algo="SAC", env="Pendulum-v1", timesteps=1000, set={"sac.batch_size": 0}))
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert panel.errors_list.isVisibleTo(panel)
    assert any("jobs.1(sac).sac.batch_size" in line for line in panel.errors()), panel.errors()
    assert read_queue(runs_dir) is None  # nothing started

    # a cycle, and a plan file with a bad value: both named before anything runs
    panel.editor.set_after("base", ["sac"])
    panel.editor.set_after("sac", ["base"])
    assert not panel.start() and any("cycle" in line for line in panel.errors())
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"jobs": [{"name": "ppo", "algo": "PPO", "set": {"ppo.n_epochs": -3}}]}))
    assert panel.editor.load(tmp_path / "bad.yaml")
    assert not panel.errors_list.isVisibleTo(panel)  # the old errors were about the old plan
    assert not panel.start() and any("jobs.0(ppo).ppo.n_epochs" in line for line in panel.errors())
    assert read_queue(runs_dir) is None


def test_start_is_refused_while_a_queue_runs(qtbot, runs_dir):
    # A queue whose runner was just launched reads as running (its start grace period): no process needed.
    state = new_state(tiny_plan("other"), "plan.yaml")
    state.launched_at = time.time()
    write_queue(runs_dir, state)
    panel = make_panel(qtbot, runs_dir)
    assert panel.state.state == "running" and rows(panel)["other"]["Status"] == "waiting"
    assert rows(panel)["other"]["Reason"] == "waiting for a free slot"
    panel.editor.add_job(PlanJob(name="mine", algo="random", episodes=5))
    assert not panel.start()
    assert "still running" in panel.errors()[0] and state.id in panel.errors()[0]
    assert read_queue(runs_dir).jobs[0].name == "other"


@pytest.mark.training
def test_a_plan_built_in_the_panel_runs_to_the_end(qtbot, runs_dir, configure):
    wait_settled(qtbot, configure)
    configure.set_field("algo", "A2C")
    configure.set_field("budget.total_timesteps", 500)
    configure.set_field("runtime.vec_env", TEST_VEC_ENV)
    wait_settled(qtbot, configure)
    panel = make_panel(qtbot, runs_dir, configure)
    editor = panel.editor
    editor.add_baseline()
    editor.add_current_config()
    editor.add_baseline()
    editor.jobs[0].episodes = editor.jobs[2].episodes = 5
    editor.set_after("base-CartPole-v1-2", ["base-CartPole-v1"])
    editor.parallel.setValue(2)
    with qtbot.waitSignal(panel.queue_started, timeout=10_000):
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert panel.errors() == []
    assert "started queue with 3 jobs, 2 at once" in panel.start_note.text().lower()
    assert list(rows(panel)) == ["base-CartPole-v1", "a2c-CartPole-v1", "base-CartPole-v1-2"]

    qtbot.waitUntil(lambda: ended(panel), timeout=TIMEOUT_MS)
    assert panel.state.state == "finished", panel.state
    shown = rows(panel)
    assert [r["Status"] for r in shown.values()] == ["finished"] * 3
    assert all(r["Run"] and ":" in r["Elapsed"] for r in shown.values())
    assert "finished" in panel.status_view.header.text()

    # double-clicking a job opens its run
    item = panel.status_view.tree.topLevelItem(1)
    with qtbot.waitSignal(panel.run_activated) as opened:
        panel.status_view.tree.itemDoubleClicked.emit(item, 0)
    run_id = panel.state.jobs[1].run_id
    assert opened.args[0] == runs_dir / run_id and opened.args[0].is_dir()
    assert shown["a2c-CartPole-v1"]["Run"] == read_run_label(runs_dir / run_id)  # the name every view shows


@pytest.mark.training
def test_a_queue_started_elsewhere_is_shown_and_can_be_cancelled(qtbot, runs_dir):
    # "one" plays long enough (minutes) that the cancel always comes while it runs: its stop is part of the test
    plan = parse_plan(lean_jobs({"jobs": [
        {"name": "one", "algo": "random", "env": "CartPole-v1", "episodes": 1_000_000},
        {"name": "two", "algo": "random", "env": "CartPole-v1", "episodes": 5, "after": ["one"]}]}))
    start_queue(runs_dir, plan)  # what `rlpanel queue run` does
    panel = make_panel(qtbot, runs_dir)
    assert list(rows(panel)) == ["one", "two"]
    assert rows(panel)["two"]["Reason"] in ("waiting for one", "")
    qtbot.waitUntil(lambda: panel.refresh() or rows(panel)["one"]["Status"] == "running", timeout=TIMEOUT_MS)
    panel.status_view.stop_running.setChecked(True)
    qtbot.mouseClick(panel.status_view.cancel_button, Qt.MouseButton.LeftButton)
    assert "no more launches" in panel.status_view.message.text()
    qtbot.waitUntil(lambda: ended(panel), timeout=TIMEOUT_MS)
    assert panel.state.state == "cancelled"
    assert rows(panel)["two"]["Status"] == "cancelled" and rows(panel)["one"]["Status"] == "stopped"


@pytest.mark.training
def test_a_crashed_runner_is_shown_and_continue_finishes_the_plan(qtbot, runs_dir):
    state = new_state(tiny_plan("only"), str(runs_dir / "plan.yaml"))
    state.launched_at = 0  # long ago, and no runner holds the queue's lock: it reads as crashed
    write_queue(runs_dir, state)
    panel = make_panel(qtbot, runs_dir)
    assert panel.state.state == "crashed"
    assert "crashed" in panel.status_view.header.text() and "Continue" in panel.status_view.header.text()
    assert panel.status_view.continue_button.isEnabled()
    qtbot.mouseClick(panel.status_view.continue_button, Qt.MouseButton.LeftButton)
    assert "continuing queue" in panel.status_view.message.text().lower()
    assert not panel.status_view.continue_button.isEnabled()  # its runner lives again
    qtbot.waitUntil(lambda: ended(panel), timeout=TIMEOUT_MS)
    assert panel.state.state == "finished" and panel.state.id == state.id
    assert rows(panel)["only"]["Status"] == "finished"


def test_continue_is_disabled_and_says_why_while_there_is_no_queue_to_continue(qtbot, runs_dir):
    """Issue 42: Continue was enabled with no queue (a hidden widget in a toolbar row is shown all the same)."""
    panel = make_panel(qtbot, runs_dir)
    panel.show()
    qtbot.waitExposed(panel)
    button = panel.status_view.continue_button
    assert not button.isEnabled() and button.toolTip().startswith(f"No queue in {runs_dir} to continue")
    state = new_state(tiny_plan("only"), str(runs_dir / "plan.yaml"))
    state.launched_at = 0  # long ago, and no runner holds the queue's lock: it reads as crashed
    write_queue(runs_dir, state)
    panel.refresh()
    assert panel.state.state == "crashed"
    assert button.isEnabled() and button.toolTip().startswith("Start the queue runner again")
    state.state = "cancelled"
    write_queue(runs_dir, state)
    panel.refresh()
    assert not button.isEnabled()
    assert button.toolTip() == (f"Queue {state.id} has ended (cancelled): Continue is for a queue whose runner is gone; "
                                "Start with the same plan runs its unfinished jobs again")


def test_a_job_is_edited_through_the_configure_tab(qtbot, runs_dir, configure):
    wait_settled(qtbot, configure)
    configure.select_preset("fast")
    configure.set_field("algo", "A2C")
    configure.set_field("a2c.n_steps", 8)
    wait_settled(qtbot, configure)
    panel = make_panel(qtbot, runs_dir, configure)
    editor = panel.editor
    assert editor.add_current_config() and editor.add_baseline()
    editor.set_after("a2c-CartPole-v1", ["base-CartPole-v1"])
    configure.select_preset("heavy")  # the user moves on to something else
    wait_settled(qtbot, configure)

    editor.select("a2c-CartPole-v1")
    qtbot.mouseClick(editor.edit_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, configure)
    assert configure.current_preset() == "fast"
    assert editor.names()[0] == "a2c-CartPole-v1"
    unnamed = {"name": None}
    assert configure.current_config().model_copy(update=unnamed) == editor.jobs[0].config().model_copy(update=unnamed)
    configure.set_field("a2c.n_steps", 16)
    wait_settled(qtbot, configure)
    qtbot.mouseClick(editor.replace_button, Qt.MouseButton.LeftButton)
    job = editor.jobs[0]
    assert (job.name, job.preset, job.algo, job.set, job.after) == (
        "a2c-CartPole-v1", "fast", "A2C", {"a2c.n_steps": 16}, ["base-CartPole-v1"])
    assert "16" in editor.table.topLevelItem(0).text(COLUMNS.index("Changes"))
    assert "Replaced a2c-CartPole-v1" in editor.message.text()
    # an invalid config does not replace anything, and says why
    configure.set_field("a2c.n_steps", -1)
    wait_settled(qtbot, configure)
    assert not editor.replace_selected() and editor.jobs[0].set == {"a2c.n_steps": 16}
    assert "errors" in editor.message.text()


def test_point_7_a_baseline_job_plays_the_baseline_episodes_and_loads_as_a_baseline(qtbot, runs_dir, configure):
    wait_settled(qtbot, configure)
    configure.select_preset("fast")
    configure.set_field("algo", "A2C")
    configure.set_field("budget.episodes", 7)
    wait_settled(qtbot, configure)
    panel = make_panel(qtbot, runs_dir, configure)
    editor = panel.editor
    assert editor.add_current_config() and editor.add_baseline()
    learner, baseline = editor.jobs
    assert (baseline.algo, baseline.episodes) == ("random", 7)  # the Baseline episodes field, not always 20
    assert "7 episodes" in editor.table.topLevelItem(1).text(3)
    assert "budget.episodes" not in learner.set  # a baseline's setting is no change of the learning job
    editor.select(baseline.name)
    qtbot.mouseClick(editor.edit_button, Qt.MouseButton.LeftButton)
    wait_settled(qtbot, configure)
    assert configure.env_picker.algo_combo.currentText() == "random"  # not the A2C shown before
    assert configure.current_config().algo == "random"
