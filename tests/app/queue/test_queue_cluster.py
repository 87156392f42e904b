"""The Queue and Sweeps tabs with a Ray cluster: the Node column, the cluster field, its errors."""

from __future__ import annotations

import importlib.util
import time

import pytest

from app.sweeps.panel import SweepsPanel
from app.widgets.cluster_field import ClusterField
from core.queue.plan import PlanJob
from core.queue.state import new_state, read_queue, write_queue
from tests.app.queue.test_queue_panel import ended, make_panel, rows, tiny_plan
from tests.core.sweep.helpers import sweep_file

TIMEOUT_MS = 120_000
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason='the ray extra is not installed (pip install "rlpanel[ray]")')


def test_the_queue_tab_shows_which_node_runs_which_job(qtbot, runs_dir):
    state = new_state(tiny_plan("a", "b", "c"), "plan.yaml")
    state.launched_at = time.time()  # its runner was just launched: it reads running
    state.ray = {"address": "http://head:8265", "python": "python", "runs": None}
    state.jobs[0].status, state.jobs[0].run_id, state.jobs[0].node = "running", "r-a", "10.0.0.5"
    state.jobs[1].status, state.jobs[1].run_id = "running", "r-b"  # submitted, Ray has not placed it yet
    write_queue(runs_dir, state)
    panel = make_panel(qtbot, runs_dir)
    shown = rows(panel)
    assert shown["a"]["Node"] == "10.0.0.5"
    assert shown["b"]["Node"] == "cluster" and shown["c"]["Node"] == ""
    assert "on the Ray cluster http://head:8265" in panel.status_view.header.text()


def test_a_bad_cluster_address_is_refused_before_the_queue_starts(qtbot, runs_dir):
    panel = make_panel(qtbot, runs_dir)
    panel.editor.add_job(PlanJob(name="base", algo="random", env="CartPole-v1", episodes=5))
    panel.cluster.address.setText("ray://head:10001")
    assert not panel.start()
    assert panel.errors()[0].startswith("Ray cluster: ray://head:10001 is a Ray Client address")
    assert read_queue(runs_dir) is None


@needs_ray
def test_the_cluster_field_sends_the_queue_there_and_is_remembered(qtbot, runs_dir):
    panel = make_panel(qtbot, runs_dir)
    panel.editor.add_job(PlanJob(name="base", algo="random", env="CartPole-v1", episodes=5))
    panel.cluster.address.setText("127.0.0.1:1")  # nothing listens there: the job fails with the reason
    panel.cluster.runs.setText("/mnt/runs")
    assert panel.start(), panel.errors()
    assert "Ray cluster at http://127.0.0.1:1" in panel.start_note.text()
    assert read_queue(runs_dir).ray == {"address": "http://127.0.0.1:1", "python": "python", "runs": "/mnt/runs"}
    qtbot.waitUntil(lambda: ended(panel), timeout=TIMEOUT_MS)
    assert rows(panel)["base"]["Status"] == "failed"
    assert "cannot reach the Ray cluster's job API at http://127.0.0.1:1" in rows(panel)["base"]["Reason"]
    again = ClusterField()  # another tab, or the next start of the window
    qtbot.addWidget(again)
    assert again.address.text() == "127.0.0.1:1" and again.runs.text() == "/mnt/runs"


def test_the_sweeps_tab_refuses_a_bad_cluster_address(qtbot, tmp_path, runs_dir):
    panel = SweepsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.cluster.address.setText("head:8265")
    panel.cluster.runs.setText("relative/runs")
    panel.run_file(sweep_file(tmp_path))
    assert "Ray cluster: --ray-runs 'relative/runs' is not an absolute path" in panel.state_label.text()
    assert not (runs_dir / ".sweeps").exists()


def test_the_cluster_field_says_ray_is_optional_and_missing_before_it_is_tried(qtbot, monkeypatch):
    import importlib.util

    import core.cluster.client as client

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else object())
    field = ClusterField()  # the plain install: no ray extra
    qtbot.addWidget(field)
    assert field.address.toolTip().endswith(f"Optional, and not installed: {client.RAY_MISSING}.")
    monkeypatch.undo()
    installed = ClusterField()
    qtbot.addWidget(installed)
    assert "not installed" not in installed.address.toolTip()
