"""The Runs tab manages runs (issue 13): sorted by any column, nothing cut, named, tagged, noted,
filtered by tag, deleted to the trash; Resume only with a checkpoint, else Restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from app.runs.panel import RunsPanel
from app.runs.rows import COLUMNS
from core.run.annotations import read_annotations
from core.run.layout import RunDir
from tests.app.fake_runs import append_jsonl, make_fake_run


@pytest.fixture
def panel(qtbot, runs_dir):
    panel = RunsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.resize(1200, 700)
    panel.show()
    return panel


def listed(qtbot, panel, n: int) -> None:
    panel.refresh()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == n and not panel._busy, timeout=10_000)


def column(panel, name: str) -> list[str]:
    c = COLUMNS.index(name)
    return [panel.tree.topLevelItem(i).text(c) for i in range(panel.tree.topLevelItemCount())]


def make_runs(runs_dir: Path) -> dict[str, Path]:
    runs = {}
    for name, steps, reward in (("ra-long-name-of-a-run", 900, 12.5), ("b", 10_000, 3.0), ("c", 50, 250.0)):
        run = make_fake_run(runs_dir, state="finished", name=name, steps=steps)
        append_jsonl(run / "metrics.jsonl", [{"kind": "episode", "step": steps, "t": 1e9, "reward": reward, "length": 5}])
        runs[name] = run
    return runs


def test_point_11_runs_sort_by_every_column_as_numbers_and_nothing_is_cut(qtbot, panel, runs_dir):
    make_runs(runs_dir)
    listed(qtbot, panel, 3)
    assert panel.tree.isColumnHidden(COLUMNS.index("Group"))  # no run was launched in a group
    header = panel.tree.header()
    for name in COLUMNS:
        header.setSortIndicator(COLUMNS.index(name), Qt.SortOrder.AscendingOrder)
        assert panel.tree.sortColumn() == COLUMNS.index(name)
    header.setSortIndicator(COLUMNS.index("Mean reward"), Qt.SortOrder.AscendingOrder)
    assert column(panel, "Mean reward") == ["3.00", "12.50", "250.00"]  # 250 after 12.5: numbers, not text
    header.setSortIndicator(COLUMNS.index("Steps"), Qt.SortOrder.DescendingOrder)
    assert [s.split(" ")[0] for s in column(panel, "Steps")][0] == "10,000"
    # every column is as wide as what it holds: the long name is not cut to "ra..."
    metrics = panel.tree.fontMetrics()
    name_col = COLUMNS.index("Run")
    assert panel.tree.columnWidth(name_col) >= metrics.horizontalAdvance(make_fake_run.__name__ and "ra-long-name-of-a-run")


def test_a_laptops_runs_table_shows_name_state_steps_and_mean_reward_without_scrolling(qtbot, panel, runs_dir):
    # the tabs beside Configure at 1280x720 logical: 676 px of table; Mean reward began at 674 px there
    panel.resize(690, 600)
    long_name = "night-ppo-cartpole-lr-3e-4-batch-256-with-a-name-longer-than-any-column-should-be"
    run = make_fake_run(runs_dir, state="running", name=long_name, device="cpu")
    append_jsonl(run / "metrics.jsonl", [{"kind": "progress", "step": 12_345, "t": 1e9, "fps": 900.0, "total": 100_000}])
    for seed in range(3):
        grouped = make_fake_run(runs_dir, state="finished", name="ppo2", steps=10_000,
                                group={"id": "g-ppo2", "seed": seed, "size": 3, "name": "ppo2"})
        append_jsonl(grouped / "metrics.jsonl", [{"kind": "episode", "step": 10_000, "t": 1e9, "reward": 99.5, "length": 5}])
    listed(qtbot, panel, 4)
    header, view = panel.tree.header(), panel.tree.viewport().width()
    assert view < 700 and not panel.tree.isColumnHidden(COLUMNS.index("Group"))
    for name in ("Run", "State", "Steps", "Mean reward"):
        col = COLUMNS.index(name)
        x = header.sectionViewportPosition(col)
        assert 0 <= x and x + header.sectionSize(col) <= view, name
    item = next(panel.tree.topLevelItem(i) for i in range(4) if panel.tree.topLevelItem(i).text(0) == long_name)
    assert item.toolTip(0).splitlines()[:2] == [long_name, run.name]  # elided in its column, whole on hover
    header.resizeSection(COLUMNS.index("Run"), 150)  # a width the user dragged is kept at the next listing
    listed(qtbot, panel, 4)
    assert panel.tree.columnWidth(COLUMNS.index("Run")) == 150


def test_rename_tag_note_and_filter_by_tag(qtbot, panel, runs_dir):
    runs = make_runs(runs_dir)
    listed(qtbot, panel, 3)
    run_id = runs["b"].name
    panel.select(run_id)
    notes = panel.notes
    notes.name.setText("PPO lr 3e-4")
    notes.tags.setText("sweep, night-3")
    notes.note.setPlainText("entropy collapses at 40k")
    assert notes.save()
    stored = read_annotations(runs["b"])
    assert (stored.display_name, stored.tags, stored.note) == ("PPO lr 3e-4", ("sweep", "night-3"), "entropy collapses at 40k")
    assert run_id in runs["b"].name  # the folder keeps its id
    qtbot.waitUntil(lambda: "PPO lr 3e-4" in column(panel, "Run"), timeout=10_000)
    qtbot.waitUntil(lambda: panel.tag_filter.findText("sweep") >= 0, timeout=5000)
    panel.set_tag_filter("sweep")
    assert panel.visible_ids() == [run_id]
    panel.set_tag_filter(None)
    assert len(panel.visible_ids()) == 3
    # a bad name is refused with its reason, and nothing is written
    panel.select(run_id)
    notes.name.setText("x" * 500)
    assert not notes.save() and "Not saved" in notes.message.text()
    assert read_annotations(runs["b"]).display_name == "PPO lr 3e-4"


def test_delete_moves_an_ended_run_to_the_trash(qtbot, panel, runs_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # the trash of a test, not the user's
    runs = make_runs(runs_dir)
    running = make_fake_run(runs_dir, state="running", name="live")
    listed(qtbot, panel, 4)
    panel.select(running.name)
    assert not panel.delete_button.isEnabled() and not panel.delete_selected(confirm=False)  # a running run stays
    panel.select(runs["c"].name)
    assert panel.delete_button.isEnabled() and panel.delete_selected(confirm=False)
    qtbot.waitUntil(lambda: not runs["c"].exists(), timeout=10_000)
    trashed = list((tmp_path / "xdg" / "Trash" / "files").iterdir())
    assert [p.name for p in trashed] == [runs["c"].name]
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 3, timeout=10_000)


def test_point_8_resume_needs_a_checkpoint_else_restart(qtbot, panel, runs_dir):
    crashed = make_fake_run(runs_dir, state="crashed", name="early")
    listed(qtbot, panel, 1)
    panel.select(crashed.name)
    assert not panel.resume_button.isEnabled() and panel.restart_button.isEnabled()
    assert "Restart" in panel.details.toPlainText()
    with qtbot.waitSignal(panel.restart_requested, timeout=2000) as blocker:
        qtbot.mouseClick(panel.restart_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [crashed]
    RunDir(crashed).checkpoints.mkdir(exist_ok=True)
    RunDir(crashed).latest_checkpoint.write_text("{}")
    listed(qtbot, panel, 1)
    panel.select(crashed.name)
    assert panel.resume_button.isEnabled()


def test_point_8_the_window_restarts_a_run_without_a_checkpoint(qtbot, make_window, runs_dir, monkeypatch):
    import core.launch.start as run_start  # where the window calls restart_run from

    crashed = make_fake_run(runs_dir, state="crashed", name="early")
    window = make_window()
    window.follow_run(crashed)
    qtbot.waitUntil(lambda: window.run_state == "crashed", timeout=5000)
    assert not window.run_actions.resume_action.isEnabled() and window.run_actions.restart_action.isEnabled()
    restarted = []
    monkeypatch.setattr(run_start, "restart_run", lambda path: restarted.append(path) or 2)
    assert window.run_actions.restart_run(crashed, confirm=False)
    assert restarted == [crashed] and "attempt 2" in window.statusBar().currentMessage()


class UrlCatcher(QObject):
    """Stands in for the browser: Qt hands it the URLs QDesktopServices opens."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    @Slot(QUrl)
    def catch(self, url: QUrl) -> None:
        self.urls.append(url.toString())


def test_open_in_tensorboard_starts_it_on_localhost_and_the_window_stops_it(qtbot, make_window, runs_dir):
    run = make_fake_run(runs_dir, state="finished", name="tb")
    RunDir(run).tensorboard.mkdir()
    window = make_window()
    browser = UrlCatcher()
    QDesktopServices.setUrlHandler("http", browser, "catch")
    try:
        window.follow_run(run)
        with qtbot.waitSignal(window.tensorboard.opened, timeout=120_000) as opened:
            window.monitor.tensorboard_button.click()
        url = opened.args[0]
        assert url.startswith("http://127.0.0.1:") and browser.urls == [url]
        boards = window.tensorboard.running()
        assert len(boards) == 1 and boards[0].logdir == RunDir(run).tensorboard
        window.close()
        assert not boards[0].running()  # no TensorBoard outlives the window
    finally:
        QDesktopServices.unsetUrlHandler("http")


def test_open_in_tensorboard_says_why_not(qtbot, make_window, runs_dir, monkeypatch):
    import app.monitor.tensorboard as launcher

    baseline = make_fake_run(runs_dir, state="finished", name="no-logs")
    window = make_window()
    with qtbot.waitSignal(window.tensorboard.message, timeout=30_000,
                          check_params_cb=lambda text: "has no TensorBoard logs" in text):
        window.tensorboard.open(baseline)
    monkeypatch.setattr(launcher, "missing_reason", lambda: "TensorBoard is not installed; fix: pip install tensorboard")
    with qtbot.waitSignal(window.tensorboard.message, timeout=5000) as said:
        window.tensorboard.open(baseline)
    assert "pip install tensorboard" in said.args[0]


def test_a_gpu_driver_reset_is_named_with_its_fix_and_a_run_resumed_after_one_says_so(qtbot, panel, runs_dir):
    """Issue 43: a failed run's details give the reset's reason (TdrDelay, a smaller batch); a run that resumed by
    itself after one, and finished, says what its resume followed."""
    from core.worker.gpu_reset import reset_reason

    reason = reset_reason("CUDA error: unspecified launch failure")
    failed = make_fake_run(runs_dir, state="failed", name="reset", failure_kind="gpu_reset", attempt=1,
                           error={"message": reason}, exit_reason=reason)
    resumed = make_fake_run(runs_dir, state="finished", name="resumed", attempt=2, resumed_from="failed",
                            auto_resume={"attempt": 1, "limit": 2, "count": 1,
                                         "history": [{"attempt": 1, "kind": "gpu_reset", "from_step": 128}]})
    listed(qtbot, panel, 2)
    panel.select(failed.name)
    text = panel.details.toPlainText()
    assert "error: GPU driver reset: CUDA error: unspecified launch failure." in text and "raise TdrDelay" in text
    assert "a smaller batch_size or network" in text and "automatic resume" not in text, text
    panel.select(resumed.name)
    text = panel.details.toPlainText()
    assert "automatic resume: 1 automatic resume, after a GPU driver reset" in text, text
