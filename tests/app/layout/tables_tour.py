"""Open the real window on a screen of a given size over a folder of real runs (a group of three seeds, a random
baseline, a live run, eleven in all) and print where the tables' columns that matter are, what the baseline combo
offers, and where the Results plot's legend is.

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json QT_SCALE_FACTOR=1.5 python -m tests.app.layout.tables_tour RUNS [SHOT]

prints one JSON object; ``columns`` maps a view to ``{"viewport": px, "columns": {title: [x, width]}}`` with x in the
table's viewport as it opens (no scrolling), hidden columns left out. RLPANEL_HOME should point at a scratch folder.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView

from tests.app.layout.tour import open_settled, settle

GROUP_ID = "20261128-185512-ppo-cartpole-v1-x3-3fa2"
# the columns a table is read for, by view: in view without a sideways scroll on a laptop screen
IMPORTANT = {
    "runs": ["Run", "State", "Steps", "Mean reward"],
    "results": ["Name", "State", "Final mean reward (last 40 ep)", "Δ vs baseline", "± (std. error)"],
    "groups": ["Group", "Final mean reward (last 40 ep), mean ± se", "95% CI", "Δ vs baseline", "Δ 95% CI"],
}


def make_runs(runs_dir: Path) -> dict[str, Path]:
    """The folder of the issue: a random baseline, a group of three PPO seeds named ``ppo2``, a run with a long
    name, one without a name, a live run and five more (eleven curves in the legend)."""
    from core.run.status import write_status
    from tests.app.fake_runs import append_jsonl, make_fake_run
    from tests.results_helpers import make_result_run

    rng = np.random.default_rng(1)

    def rising(level: float) -> list[float]:
        return [float(v) for v in level * np.linspace(0.2, 1, 40) + rng.normal(0, 5, 40)]

    made = {"base": make_result_run(runs_dir, "base", [float(v) for v in rng.normal(24, 9, 40)], algo="random")}
    for seed in range(3):
        run = make_result_run(runs_dir, "ppo2", rising(150), algo="PPO", settings={"runtime.seed": seed})
        write_status(run, group={"id": GROUP_ID, "seed": seed, "size": 3, "name": "ppo2"})
        made[f"ppo2-s{seed}"] = run
    made["long"] = make_result_run(runs_dir, "ppo-long-night-cartpole-with-a-long-name", rising(180), algo="PPO")
    made["unnamed"] = make_result_run(runs_dir, "", rising(120), algo="PPO")
    for k, algo in enumerate(("A2C", "DQN", "A2C", "DQN")):
        made[f"extra{k}"] = make_result_run(runs_dir, f"{algo.lower()}-{k}", rising(60 + 10 * k), algo=algo)
    live = make_fake_run(runs_dir, state="running", name="night-ppo-live", device="cpu")  # this process is its worker
    append_jsonl(live / "metrics.jsonl", [{"kind": "progress", "step": 12_345, "t": time.time(), "fps": 900.0,
                                          "total": 100_000}])
    made["live"] = live
    return made


def columns(view: QAbstractItemView, header: QHeaderView) -> dict:
    model = header.model()
    shown = {}
    for i in range(header.count()):
        if not header.isSectionHidden(i):
            title = str(model.headerData(i, Qt.Orientation.Horizontal)).replace("\n", " ")
            shown[title] = [header.sectionViewportPosition(i), header.sectionSize(i)]
    return {"viewport": view.viewport().width(), "columns": shown}


def columns_cut(view: str, table: dict) -> list[str]:
    """The ``IMPORTANT`` columns of ``view`` that ``table`` (what ``columns`` gives) hides, or shows in part or not at all."""
    shown = {_any_window(title): place for title, place in table["columns"].items()}
    cut = []
    for title in IMPORTANT[view]:
        if _any_window(title) not in shown:
            cut.append(f"{view}: {title!r} is hidden (shown: {list(table['columns'])})")
            continue
        x, size = shown[_any_window(title)]
        if x < 0 or x + size > table["viewport"]:
            cut.append(f"{view}: {title!r} at {x}-{x + size} px in a {table['viewport']} px view")
    return cut


def _any_window(title: str) -> str:
    """A title with its reward window left out: runs of fewer episodes read "(last 12-40 ep)"."""
    return re.sub(r"\(last [^)]* ep\)", "(last … ep)", title)


def wait_results(app: QApplication, panel) -> None:
    deadline = time.monotonic() + 30
    settle(app, 0.3)
    while (panel.loading or panel.curve_mode.computing) and time.monotonic() < deadline:
        settle(app, 0.1)
    settle(app, 0.5)


def legend_place(panel) -> dict:
    item = panel.plot.getPlotItem()
    legend, view = item.legend.sceneBoundingRect(), item.vb.sceneBoundingRect()
    label = panel.plot.baseline_line.label.sceneBoundingRect() if panel.plot.baseline_line is not None else None
    both = legend.intersected(view)
    corner = panel.plot.mapFromScene(legend.bottomRight() - QPointF(1, 1))
    return {"entries": len(item.legend.items), "over_view_box_px": [both.width(), both.height()],
            "over_baseline_label": bool(label is not None and legend.intersects(label)),
            "in_plot": panel.plot.rect().contains(corner)}


def tour(runs_dir: Path, shot: Path | None) -> dict:
    made = make_runs(runs_dir)
    app, window = open_settled(runs_dir)
    out: dict = {"window": [window.width(), window.height()], "columns": {}}
    tabs = window.lazy_tabs.names()

    window.tabs.setCurrentIndex(tabs.index("Runs"))
    window.runs.refresh()
    deadline = time.monotonic() + 30
    while len(window.runs.infos) < len(made) and time.monotonic() < deadline:
        settle(app, 0.1)
    settle(app, 0.5)
    out["configure_shown"] = {"Runs": window.configure.isVisible()}
    out["columns"]["runs"] = columns(window.runs.tree, window.runs.tree.header())

    window.tabs.setCurrentIndex(tabs.index("Results"))
    settle(app, 0.5)
    out["configure_shown"]["Results"] = window.configure.isVisible()
    results = window.results
    results.set_checked(results.shown_ids())
    results.set_baseline(made["base"].name)
    wait_results(app, results)
    out["columns"]["results"] = columns(results.table, results.table.horizontalHeader())
    out["legend"] = legend_place(results)
    combo = results.baseline_combo
    out["baseline"] = [[combo.itemText(i), combo.itemData(i, Qt.ItemDataRole.ToolTipRole) or ""] for i in range(combo.count())]
    out["ids"] = {key: path.name for key, path in made.items()}
    results.set_table_rows("launch group")
    wait_results(app, results)
    out["columns"]["groups"] = columns(results.table, results.table.horizontalHeader())
    if shot is not None:
        window.grab().save(str(shot))
    window.tabs.setCurrentIndex(tabs.index("Monitor"))
    settle(app, 0.3)
    out["configure_shown"]["Monitor"] = window.configure.isVisible()
    return out


def main() -> None:
    shot = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    print(json.dumps(tour(Path(sys.argv[1]), shot)), flush=True)
    os._exit(0)  # the measurements are out; the window's threads need no orderly end here


if __name__ == "__main__":
    main()
