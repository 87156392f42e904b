"""The Results tab: ticked runs overlay their curves, the table and its export, PNG and SVG plots."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import openpyxl
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from app.results.panel import ResultsPanel
from app.results.save_path import PLOT_FILTERS, TABLE_FILTERS, with_suffix
from core.results.table import columns_for
from tests.results_helpers import make_result_run

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def runs(runs_dir):
    return {"base": make_result_run(runs_dir, "base", [20.0, 22.0, 21.0], algo="random"),
            "ppo": make_result_run(runs_dir, "ppo", [float(i) for i in range(40)], algo="PPO", seconds_per_episode=2.0),
            "a2c": make_result_run(runs_dir, "a2c", [float(2 * i) for i in range(30)]),
            "boom": make_result_run(runs_dir, "boom", [5.0, 6.0], state="crashed")}


def shown(qtbot, panel: ResultsPanel) -> None:
    """Wait until the background reader's answer for the current ticks is on screen."""
    qtbot.waitUntil(lambda: not panel.loading, timeout=10_000)


def tick(qtbot, panel: ResultsPanel, run_id: str) -> None:
    for i in range(panel.run_list.count()):
        item = panel.run_list.item(i)
        if item.data(Qt.ItemDataRole.UserRole) == run_id:
            item.setCheckState(Qt.CheckState.Checked)  # as a click on the box does: itemChanged
            shown(qtbot, panel)
            return
    raise AssertionError(f"{run_id} is not in the list")


def fake_save_dialog(monkeypatch, path, chosen_filter):
    asked = []

    def answer(*args, **kwargs):
        asked.append(args)
        return str(path), chosen_filter

    monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)
    return asked


def table_cells(panel: ResultsPanel) -> list[list[str]]:
    m = panel.table.model()
    return [[m.index(r, c).data() for c in range(m.columnCount())] for r in range(m.rowCount())]


def cells_by_run(panel: ResultsPanel) -> dict[str, dict[str, str]]:
    """Each row's cells by column title, under the run's id (the Run column, hidden in the window but in the model)."""
    titles = [c.title for c in panel.model.columns]
    return {cells[titles.index("Run")]: dict(zip(titles, cells, strict=True)) for cells in table_cells(panel)}


def test_ticking_two_runs_overlays_two_curves_and_fills_the_table(qtbot, panel, runs):
    assert panel.run_list.count() == 4 and panel.plot.listDataItems() == []
    assert "Tick runs" in panel.plot.message()  # not empty 0..1 axes
    tick(qtbot, panel, runs["ppo"].name)
    tick(qtbot, panel, runs["a2c"].name)
    assert len(panel.plot.listDataItems()) == 2 and panel.plot.message() is None
    assert sorted(panel.plot.curve_labels()) == ["a2c", "ppo"]
    assert panel.model.rowCount() == 2
    # the export's columns, the name and the figures first
    assert sorted(c.title for c in panel.model.columns) == sorted(c.title for c in columns_for(panel.rows))
    assert [c.key for c in panel.model.columns][:3] == ["name", "state", "final_mean_reward"]
    ppo = next(i for i in panel.plot.listDataItems() if i.name() == "ppo")
    assert list(ppo.xData) == [20.0 * (i + 1) for i in range(40)]  # aligned on timesteps
    panel.x_combo.setCurrentIndex(panel.x_combo.findData("time"))
    ppo = next(i for i in panel.plot.listDataItems() if i.name() == "ppo")
    assert list(ppo.xData) == [2.0 * (i + 1) for i in range(40)]  # seconds since the run's start
    assert "wall time" in panel.plot.getPlotItem().getAxis("bottom").labelText
    panel.set_checked([])
    shown(qtbot, panel)
    assert panel.plot.listDataItems() == [] and panel.model.rowCount() == 0 and "Tick runs" in panel.status.text()
    assert "Tick runs" in panel.plot.message()


def test_baseline_picker_adds_the_delta_columns_and_marks_crashed_runs(qtbot, panel, runs):
    panel.set_checked([runs["a2c"].name, runs["boom"].name])
    shown(qtbot, panel)
    panel.set_baseline(runs["base"].name)
    shown(qtbot, panel)
    deltas = ["Δ vs baseline", "± (std. error)", "Δ vs baseline (%)", "Δ compares"]
    assert set(deltas) <= {c.title for c in panel.model.columns}
    cells = cells_by_run(panel)
    base = cells[runs["base"].name]
    assert [base[t] for t in deltas] == ["baseline", "–", "baseline", "baseline"]
    a2c = panel.rows[[r.run_id for r in panel.rows].index(runs["a2c"].name)]
    assert cells[a2c.run_id]["Δ vs baseline"] == f"{a2c.final_mean_reward - 21.0:+,.2f}"
    assert cells[runs["boom"].name]["State"] == "crashed †" and "did not finish" in panel.status.text()
    panel.set_baseline(None)
    shown(qtbot, panel)
    assert "Δ vs baseline" not in [c.title for c in panel.model.columns]


def test_sorting_the_table_by_a_number_uses_its_value(qtbot, panel, runs):
    panel.set_checked([r.name for r in runs.values()])
    shown(qtbot, panel)
    col = [c.key for c in panel.model.columns].index("episodes")
    panel.table.sortByColumn(col, Qt.SortOrder.DescendingOrder)
    assert [row[col] for row in table_cells(panel)] == ["40", "30", "3", "2"]


@pytest.mark.parametrize(("suffix", "chosen"), [(".xlsx", "Excel workbook (*.xlsx)"), ("", "CSV, Excel-friendly (*.csv)")])
def test_export_button_writes_the_table_in_the_chosen_format(qtbot, panel, runs, tmp_path, monkeypatch, suffix, chosen):
    panel.set_checked([runs["ppo"].name, runs["a2c"].name])
    shown(qtbot, panel)
    target = tmp_path / f"night{suffix}"
    asked = fake_save_dialog(monkeypatch, target, chosen)
    panel.export_button.click()
    assert asked and "Wrote 2 runs" in panel.status.text()
    if suffix == ".xlsx":
        ws = openpyxl.load_workbook(target).active
        assert ws.max_row == 3 and {ws.cell(row=i, column=1).value for i in (2, 3)} == {runs["ppo"].name, runs["a2c"].name}
    else:  # no suffix typed: the chosen file type's
        text = (tmp_path / "night.csv").read_text(encoding="utf-8-sig")
        assert text.splitlines()[0].startswith("Run,Name,Algorithm") and len(text.splitlines()) == 3


def test_plot_saves_as_png_and_valid_svg(qtbot, panel, runs, tmp_path, monkeypatch):
    panel.set_checked([runs["ppo"].name, runs["a2c"].name])
    shown(qtbot, panel)
    fake_save_dialog(monkeypatch, tmp_path / "curves.png", "PNG image (*.png)")
    panel.save_plot_button.click()
    image = QImage(str(tmp_path / "curves.png"))
    assert not image.isNull() and image.width() >= 800
    fake_save_dialog(monkeypatch, tmp_path / "curves", "SVG vector image (*.svg)")
    panel.save_plot_button.click()
    root = ET.parse(tmp_path / "curves.svg").getroot()
    assert root.tag == f"{SVG}svg"
    lines = root.findall(f".//{SVG}polyline")
    assert len(lines) == 2 and {ln.find(f"{SVG}title").text for ln in lines} == {"ppo", "a2c"}
    points = [p.split(",") for p in lines[0].get("points").split()]
    assert len(points) in (30, 40) and all(len(p) == 2 for p in points)
    assert {t.text for t in root.iter(f"{SVG}text")} >= {"ppo", "a2c", "timesteps"}


def test_refresh_keeps_ticks_and_finds_new_runs(qtbot, panel, runs, runs_dir):
    panel.set_checked([runs["ppo"].name])
    shown(qtbot, panel)
    panel.set_baseline(runs["base"].name)
    shown(qtbot, panel)
    new = make_result_run(runs_dir, "late", [1.0])
    panel.refresh()
    shown(qtbot, panel)
    assert panel.run_list.count() == 5 and panel.checked_ids() == [runs["ppo"].name]
    assert panel.baseline_id() == runs["base"].name and new.name in [panel.baseline_combo.itemData(i)
                                                                      for i in range(panel.baseline_combo.count())]


def test_a_typed_suffix_wins_over_the_chosen_file_type(tmp_path):
    assert with_suffix(str(tmp_path / "a.tex"), "Markdown table (*.md)", TABLE_FILTERS, {".tex", ".md"}).suffix == ".tex"
    assert with_suffix(str(tmp_path / "a"), "SVG vector image (*.svg)", PLOT_FILTERS).name == "a.svg"


def test_panel_screenshot_is_not_blank(qtbot, panel, runs, tmp_path):
    panel.show()
    panel.set_checked([r.name for r in runs.values()])
    shown(qtbot, panel)
    image = panel.grab().toImage()
    assert image.width() > 0 and len({image.pixel(x, 200) for x in range(0, image.width(), 7)}) > 3


def test_runs_are_read_off_the_gui_thread_and_an_ended_run_only_once(qtbot, panel, runs, monkeypatch):
    import threading

    import app.results.loader as loader

    on_gui_thread = []

    def spy(run_dir):
        on_gui_thread.append(threading.current_thread() is threading.main_thread())
        return real(run_dir)

    real = loader.result_row
    monkeypatch.setattr(loader, "result_row", spy)
    panel.set_checked([runs["ppo"].name])
    assert panel.loading and "Reading 1 run" in panel.status.text()  # the window does not wait for it
    shown(qtbot, panel)
    assert on_gui_thread == [False] and panel.rows[0].episodes == 40
    panel.set_checked([])
    panel.set_checked([runs["ppo"].name])
    shown(qtbot, panel)
    assert len(on_gui_thread) == 1  # unchanged folder: from the cache
    make_result_run_episode(runs["ppo"])  # the folder changed: read again
    panel.set_checked([])
    panel.set_checked([runs["ppo"].name])
    shown(qtbot, panel)
    assert len(on_gui_thread) == 2 and len(panel.plot.listDataItems()[0].xData) == 41  # the new episode's point


def make_result_run_episode(run_dir) -> None:
    import json
    import time

    with open(run_dir / "metrics.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"kind": "episode", "step": 10_000, "t": time.time(), "reward": 1.0, "length": 10}) + "\n")


def test_point_6_the_table_compares_evaluations_names_its_windows_and_the_runs_own_gpu_memory(qtbot, runs_dir):
    # SAC's training episodes are worse than random, its evaluations better: the delta is on the evaluations
    base = make_result_run(runs_dir, "random", [float(v) for v in range(-60, -40)], algo="random")
    sac = make_result_run(runs_dir, "sac", [-80.0] * 45, algo="SAC", env="Pendulum-v1",
                          evals=[(-70.0, 5.0), (-30.0, 4.0)], eval_episodes=10, gpu_peak_bytes=3686 * 2**20,
                          process_peak_bytes=829 * 2**20, settings={"sac.learning_rate": 0.001})
    other = make_result_run(runs_dir, "sac2", [-75.0] * 45, algo="SAC", env="Pendulum-v1",
                            settings={"sac.learning_rate": 0.0003})
    panel = ResultsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.resize(1400, 700)
    try:
        panel.set_checked([sac.name, other.name])
        shown(qtbot, panel)
        panel.set_baseline(base.name)
        shown(qtbot, panel)
        titles = [c.title for c in panel.model.columns]
        cells = cells_by_run(panel)
        ours = cells[sac.name]
        assert ours["Δ vs baseline"] == f"{-30.0 - (-50.5):+,.2f}"  # eval mean -30 vs the baseline's -50.5
        assert ours["Δ compares"].startswith("eval") and "10 vs 20 ep" in ours["Δ compares"]
        assert ours["Peak GPU memory, this run's processes (MiB)"] == "829"
        assert ours["Peak GPU memory, whole card incl. driver reserve (MiB)"] == "3,686"
        # the helper's telemetry has the RSS sum only (a run folder from before), the others none: the header says so
        assert ours["Peak host memory, this run, RSS sum (MiB)"] == "300"
        # 20 episodes is all the baseline has: the header says the real window, not "(100 ep)"
        assert any("last 20" in t for t in titles), titles
        assert "sac.learning_rate" in titles  # the setting the runs differ in
        # the baseline is a flat band on the overlay
        assert panel.plot.baseline_band is not None and panel.plot.baseline_text().startswith("baseline")
        # filter and group by algorithm
        panel.set_filter("algo", "random")
        assert panel.shown_ids() == [base.name]
        panel.set_filter("algo", None)
        panel.set_group("algorithm")
        texts = [panel.run_list.item(i).text() for i in range(panel.run_list.count())]
        assert "algorithm: SAC" in texts and "algorithm: random" in texts
    finally:
        panel.close_loader()


def test_table_rows_switch_to_groups_of_seeds_with_the_baseline_group_and_export_them(qtbot, runs_dir, tmp_path, monkeypatch):
    from core.run.status import write_status

    ids = {}
    for group, level in (("tuned", 100.0), ("plain", 10.0)):
        for seed in range(3):
            run = make_result_run(runs_dir, f"{group}-{seed}", [level + seed] * 5, settings={"runtime.seed": seed})
            write_status(run, group={"id": group, "seed": seed, "size": 3})
            ids.setdefault(group, []).append(run.name)
    panel = ResultsPanel(runs_dir)
    qtbot.addWidget(panel)
    try:
        panel.set_checked(ids["tuned"] + ids["plain"])
        panel.set_baseline(ids["plain"][0])
        shown(qtbot, panel)
        assert panel.model.rowCount() == 6 and panel.groups is None
        panel.set_table_rows("launch group")
        shown(qtbot, panel)
        model = panel.model
        titles = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
        cells = {model.index(r, 0).data(): [model.index(r, c).data() for c in range(model.columnCount())]
                 for r in range(model.rowCount())}
        assert list(cells) == ["plain", "tuned"] and cells["plain"][titles.index("Δ vs baseline")] == "baseline"
        tuned = cells["tuned"]
        assert tuned[titles.index("Seeds")] == "3" and tuned[titles.index("Sig.")] == "*"
        assert tuned[titles.index(next(t for t in titles if t.endswith("mean ± se")))] == "101.00 ± 0.58"
        assert "2 groups of 6 runs" in panel.status.text()
        fake_save_dialog(monkeypatch, tmp_path / "groups.md", "Markdown table (*.md)")
        text = panel.export_table().read_text(encoding="utf-8")
        assert "| tuned |" in text and "Welch" in text and "2 groups" in panel.status.text()
        panel.set_table_rows("each run")
        shown(qtbot, panel)
        assert panel.model.rowCount() == 6 and panel.groups is None
    finally:
        panel.close_loader()
