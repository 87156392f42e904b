"""One name per run: the Runs tab, Results, the Monitor's title and the Queue show the same name
(core.run.names.run_label): the display name, else the config's name, else the id."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QTreeWidgetItem

from app.queue.status_view import COLUMNS as QUEUE_COLUMNS
from app.results.panel import run_label as results_label
from app.runs.rows import run_row
from core.queue.plan import parse_plan
from core.queue.state import new_state, write_queue
from core.run.annotations import annotate
from core.run.store import run_info
from tests.app.fake_runs import make_fake_run
from tests.training_helpers import lean_jobs


def three_runs(runs_dir):
    named = make_fake_run(runs_dir, state="finished", name="night-ppo")  # named in Configure or a queue job
    trial = make_fake_run(runs_dir, state="finished", name="base")
    annotate(trial, name="lr-sweep #3")  # what a sweep (or the Notes box) gives it
    bare = make_fake_run(runs_dir, state="finished")
    return {"night-ppo": named, "lr-sweep #3": trial, bare.name: bare}


def test_every_view_shows_a_run_by_the_same_name(qtbot, make_window, runs_dir):
    runs = three_runs(runs_dir)
    now = time.time()
    for label, run in runs.items():
        info = run_info(run)
        assert info.label == label
        assert run_row(info, now).text(0) == label  # the Runs tab
        assert f"  {label}  ·  " in results_label(info)  # the Results list

    window = make_window()
    window.follow_run(runs["night-ppo"])  # the Monitor's title: the name, then the id
    assert window.monitor.title.text().startswith(f"night-ppo  ({runs['night-ppo'].name})")
    window.follow_run(runs["lr-sweep #3"])
    assert window.monitor.title.text().startswith(f"lr-sweep #3  ({runs['lr-sweep #3'].name})")

    plan = parse_plan(lean_jobs({"jobs": [{"name": n, "algo": "random", "env": "CartPole-v1", "episodes": 5}
                                          for n in ("one", "two", "three")]}))
    state = new_state(plan, str(runs_dir / "plan.yaml"))
    for job, run in zip(state.jobs, runs.values(), strict=True):
        job.status, job.run_id = "finished", run.name
    write_queue(runs_dir, state)
    view = window.queue.status_view
    view.refresh()
    qtbot.waitUntil(lambda: view.tree.topLevelItemCount() == 3, timeout=10_000)
    shown = [view.tree.topLevelItem(i).text(QUEUE_COLUMNS.index("Run")) for i in range(3)]
    assert shown == list(runs)
    item: QTreeWidgetItem = view.tree.topLevelItem(1)
    assert item.toolTip(QUEUE_COLUMNS.index("Run")) == runs["lr-sweep #3"].name  # the id where a user needs it
