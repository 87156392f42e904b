"""The Results tab's curves per group of seeds: one line and one band per group, seeds on demand, the baseline."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt

from app.results.panel import ResultsPanel
from core.run.status import write_status
from tests.results_helpers import make_result_run

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def runs(runs_dir):
    rng = np.random.default_rng(3)
    made = {"base": make_result_run(runs_dir, "base", [20.0, 22.0, 21.0], algo="random")}
    for group, lr, level in (("fast", 1e-3, 40.0), ("slow", 3e-4, 10.0)):
        for seed in range(3):
            rewards = [float(v) for v in level * np.linspace(0, 1, 12) + rng.normal(0, 2, 12)]
            run = make_result_run(runs_dir, f"{group}-s{seed}", rewards, settings={"a2c.learning_rate": lr, "runtime.seed": seed},
                                  steps_per_episode=20 + 5 * seed)  # different step spacings
            write_status(run, group={"id": f"g-{group}", "seed": seed, "size": 3, "name": group})
            made[f"{group}{seed}"] = run
    return made


def drawn(qtbot, panel: ResultsPanel) -> None:
    """Wait until the ticked runs are read and their curves (grouped or not) are on the plot."""
    qtbot.waitUntil(lambda: not panel.loading and not panel.curve_mode.computing, timeout=10_000)


def bands(panel: ResultsPanel) -> list[pg.FillBetweenItem]:
    return [i for i in panel.plot.getPlotItem().items if isinstance(i, pg.FillBetweenItem)]


def test_per_group_draws_one_line_and_one_band_per_group_and_the_seeds_on_demand(qtbot, panel, runs, tmp_path):
    panel.set_checked([r.name for k, r in runs.items() if k != "base"])
    panel.set_baseline(runs["base"].name)
    drawn(qtbot, panel)
    assert len(panel.plot.listDataItems()) == 6 and bands(panel) == []  # each run's own curve by default
    assert not panel.curve_mode.mode_combo.isEnabled() and not panel.curve_mode.seeds_box.isEnabled()

    panel.curve_mode.set_mode("mean")
    drawn(qtbot, panel)
    assert sorted(panel.plot.curve_labels()) == ["fast (n=3)", "slow (n=3)"]
    assert len(panel.plot.listDataItems()) == 2 and len(bands(panel)) == 2
    assert panel.plot.baseline_text() == "baseline base: 21.00 ± 0.82"  # on the same axes
    fast = next(g for g in panel.plot.groups() if g.label == "fast")
    line = next(i for i in panel.plot.listDataItems() if i.name() == "fast (n=3)")
    assert line.yData.tolist() == pytest.approx(fast.center.tolist())
    assert fast.x[0] == 30 and fast.x[-1] == 240  # the seeds' common range: 30 (seed 2's first) to 240 (seed 0's last)
    assert "mean of seeds, 95 % CI" in panel.plot.getPlotItem().titleLabel.text and "1,000 resamples" in panel.plot.toolTip()

    panel.curve_mode.seeds_box.setChecked(True)
    assert len(panel.plot.listDataItems()) == 2 + 6 and len(bands(panel)) == 2
    assert sorted(panel.plot.curve_labels()) == ["fast (n=3)", "slow (n=3)"]  # the seeds are not in the legend
    panel.curve_mode.seeds_box.setChecked(False)
    assert len(panel.plot.listDataItems()) == 2

    panel.x_combo.setCurrentIndex(panel.x_combo.findData("time"))  # grouped again on seconds since each start
    drawn(qtbot, panel)
    assert len(panel.plot.listDataItems()) == 2 and panel.plot.groups()[0].x[0] == 0.5

    svg = tmp_path / "groups.svg"
    panel.plot.save_svg(svg)
    text = svg.read_text()
    assert text.count("<polygon") == 2 and "fast (n=3)" in text

    panel.curve_mode.set_mode("iqm", by="config")  # the same groups here: a config per learning rate
    drawn(qtbot, panel)
    assert len(panel.plot.listDataItems()) == 2 and {g.n for g in panel.plot.groups()} == {3}
    assert "IQM of seeds" in panel.plot.getPlotItem().titleLabel.text

    panel.curve_mode.set_mode(None)
    drawn(qtbot, panel)
    assert len(panel.plot.listDataItems()) == 6 and bands(panel) == []


def test_a_run_alone_is_a_group_of_one_without_a_band(qtbot, panel, runs):
    panel.curve_mode.set_mode("mean")
    panel.set_checked([runs["base"].name, runs["fast0"].name])
    drawn(qtbot, panel)
    assert sorted(panel.plot.curve_labels()) == ["base (n=1)", "fast (n=1)"] and bands(panel) == []
    panel.set_checked([])
    drawn(qtbot, panel)
    assert "Tick runs" in panel.plot.message()


def test_a_crashed_seed_is_left_out_of_its_groups_curve_and_row_until_unfinished_is_ticked(qtbot, panel, runs_dir):
    made = []
    for seed, (level, state, episodes) in enumerate([(40.0, "finished", 12), (5.0, "crashed", 3), (44.0, "finished", 12)]):
        run = make_result_run(runs_dir, f"g-s{seed}", [level] * episodes, state=state, settings={"runtime.seed": seed})
        write_status(run, group={"id": "g", "seed": seed, "size": 3, "name": "g"})
        made.append(run)
    panel.refresh()  # the list as the panel reads it again
    panel.set_checked([r.name for r in made])
    panel.curve_mode.set_mode("mean")
    drawn(qtbot, panel)
    assert panel.plot.curve_labels() == ["g (n=2; 1 unfinished left out)"]
    assert panel.plot.groups()[0].x[-1] == 240  # not cut where the crashed seed ended (step 60)
    row = panel.groups.rows[0]
    assert row.n == 2 and row.stats.mean == pytest.approx(42.0) and row.left_out == [f"{made[1].name} (crashed at 60 steps)"]
    headers = [panel.model.headerData(i, Qt.Orientation.Horizontal) for i in range(panel.model.columnCount())]
    assert "Left out" in headers and "1 unfinished left out of the statistics" in panel.status.text()

    panel.curve_mode.unfinished_box.setChecked(True)
    drawn(qtbot, panel)
    assert panel.plot.curve_labels() == ["g (n=3)"] and panel.plot.groups()[0].x[-1] == 60
    row = panel.groups.rows[0]
    assert row.n == 3 and row.stats.mean == pytest.approx(89 / 3) and row.left_out == [] and row.marked
    headers = [panel.model.headerData(i, Qt.Orientation.Horizontal) for i in range(panel.model.columnCount())]
    assert "Left out" not in headers
