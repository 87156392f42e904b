"""The Results tab with little room: the baseline combo tells every run apart (a group of seeds, a run without a
name, two runs of one name), the table's name and figures come first and any column can be hidden from the header's
menu, and a legend of many curves goes beside the plot instead of over it."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

from app.plots.side_legend import full_name
from app.results.panel import ResultsPanel
from core.run.status import write_status
from tests.results_helpers import make_result_run

GROUP = "20261128-185512-ppo-cartpole-v1-x3-3fa2"


@pytest.fixture
def runs(runs_dir):
    made = {"base": make_result_run(runs_dir, "base", [20.0, 28.0, 24.0] * 4, algo="random")}
    for seed in range(3):
        run = make_result_run(runs_dir, "ppo2", [float(10 * seed + i) for i in range(12)], algo="PPO",
                              settings={"runtime.seed": seed})
        write_status(run, group={"id": GROUP, "seed": seed, "size": 3, "name": "ppo2"})
        made[f"ppo2-s{seed}"] = run
    made["unnamed"] = make_result_run(runs_dir, "", [float(i) for i in range(12)], algo="PPO")
    # the same name twice, launched alone, at different times: told apart by when they started
    made["night-a"] = make_result_run(runs_dir, "night", [1.0] * 12, started_at=time.time() - 7200)
    made["night-b"] = make_result_run(runs_dir, "night", [2.0] * 12, started_at=time.time() - 3600)
    for k in range(4):
        made[f"a2c-{k}"] = make_result_run(runs_dir, f"a2c-{k}", [float(k + i) for i in range(12)])
    return made


def shown(qtbot, panel: ResultsPanel) -> None:
    qtbot.waitUntil(lambda: not panel.loading and not panel.curve_mode.computing, timeout=10_000)


def combo_items(panel: ResultsPanel) -> dict[str, str]:
    """Each run's entry in the baseline combo, by its id."""
    combo = panel.baseline_combo
    return {combo.itemData(i): combo.itemText(i) for i in range(1, combo.count())}


def test_the_baseline_combo_names_each_run_with_its_algorithm_and_env_and_no_two_alike(panel, runs):
    items = combo_items(panel)
    assert items[runs["base"].name] == "base (random, CartPole-v1)"
    # a group's runs share the name ppo2: it read "ppo2" three times; each by its seed now
    assert [items[runs[f"ppo2-s{s}"].name] for s in range(3)] == [f"ppo2, seed {s} (PPO, CartPole-v1)" for s in range(3)]
    # a run without a name: its id cut in the middle read "20261128-185…-cartpole-v1" for every run of a day
    assert items[runs["unnamed"].name].startswith("run of ") and items[runs["unnamed"].name].endswith("(PPO, CartPole-v1)")
    a, b = items[runs["night-a"].name], items[runs["night-b"].name]
    assert a.startswith("night (A2C, CartPole-v1, ") and b.startswith("night (A2C, CartPole-v1, ") and a != b
    assert len(set(items.values())) == len(items)
    combo = panel.baseline_combo
    index = combo.findData(runs["base"].name)
    assert combo.itemData(index, Qt.ItemDataRole.ToolTipRole).splitlines()[0] == runs["base"].name  # the id on hover


def test_the_table_puts_the_figures_first_and_the_header_menu_hides_a_column_for_good(qtbot, panel, runs, runs_dir):
    panel.set_checked([runs["ppo2-s0"].name, runs["a2c-0"].name])
    panel.set_baseline(runs["base"].name)
    shown(qtbot, panel)
    keys = [c.key for c in panel.model.columns]
    # the random baseline is evaluated by all its episodes: an Eval mean column
    assert keys[:6] == ["name", "state", "final_mean_reward", "eval_mean_reward", "delta_reward", "delta_se"]
    hidden = [c.key for i, c in enumerate(panel.model.columns) if panel.table.isColumnHidden(i)]
    assert hidden == ["run_id"]  # the id: in the name's tooltip (and the name of a run without one)
    header = panel.table.horizontalHeader()
    assert "\n" in panel.model.headerData(keys.index("final_mean_reward"), Qt.Orientation.Horizontal)  # two lines
    assert header.sectionSize(keys.index("final_mean_reward")) < 200  # was 233 px for "Final mean reward (last 100 ep)"

    menu = panel.column_chooser.make_menu()
    state = next(a for a in menu.actions() if a.text() == "State")
    assert state.isChecked() and "Run" in [a.text() for a in menu.actions()] and "Name" not in [a.text() for a in menu.actions()]
    state.trigger()  # unticked: hidden, here and in the next window
    assert panel.table.isColumnHidden(keys.index("state"))
    again = ResultsPanel(runs_dir)
    qtbot.addWidget(again)
    try:
        again.set_checked([runs["a2c-0"].name])
        shown(qtbot, again)
        assert again.table.isColumnHidden([c.key for c in again.model.columns].index("state"))
    finally:
        again.close_loader()
    every = next(a for a in panel.column_chooser.make_menu().actions() if a.text() == "Every column")
    every.trigger()
    assert not any(panel.table.isColumnHidden(i) for i in range(panel.model.columnCount()))


def test_a_long_legend_goes_beside_the_plot_and_a_short_one_stays_in_its_corner(qtbot, panel, runs):
    panel.show()
    qtbot.waitExposed(panel)
    plot = panel.plot
    item = plot.getPlotItem()
    panel.set_checked([runs["a2c-0"].name, runs["a2c-1"].name])
    panel.set_baseline(runs["base"].name)
    shown(qtbot, panel)
    assert len(plot.curve_labels()) == 2 and plot.legend.parentItem() is item.vb  # a few: in the corner

    panel.set_checked([r.name for r in runs.values()])
    shown(qtbot, panel)
    labels = plot.curve_labels()
    assert len(labels) == 11 and {"ppo2, seed 0", "ppo2, seed 1", "ppo2, seed 2"} <= set(labels)  # not three ids
    qtbot.waitUntil(lambda: plot.legend.sceneBoundingRect().left() >= item.vb.sceneBoundingRect().right() - 1)
    legend = plot.legend.sceneBoundingRect()
    assert legend.intersected(item.vb.sceneBoundingRect()).width() < 1  # over no curve
    assert not legend.intersects(plot.baseline_line.label.sceneBoundingRect())  # nor the baseline's label
    assert legend.bottom() <= item.sceneBoundingRect().bottom() and legend.right() <= plot.width()  # all of it shown

    panel.resize(720, 700)  # a narrow plot (Configure beside Results on a laptop): the names give way, not the legend
    qtbot.waitUntil(lambda: plot.width() < 480)
    qtbot.waitUntil(lambda: plot.legend.sceneBoundingRect().right() <= plot.width())
    assert item.sceneBoundingRect().width() <= plot.width()  # the plot no wider than its view: nothing cut at its edge
    unnamed = next(label for _sample, label in plot.legend.items if full_name(label) == runs["unnamed"].name)
    assert unnamed.text.endswith("…") and unnamed.toolTip() == runs["unnamed"].name  # whole on hover
    assert plot.curve_labels() == labels

    panel.set_checked([runs["a2c-0"].name])
    shown(qtbot, panel)
    assert plot.legend.parentItem() is item.vb and plot.legend.pos().x() == 8  # back in the corner
