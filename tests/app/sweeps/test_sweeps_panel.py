"""The Sweeps tab over a real small sweep, started from the tab: table, charts, importance, best as preset."""

from __future__ import annotations

import pytest

from app.background import wait_for_background
from app.sweeps.panel import SweepsPanel
from core.config.presets import resolve
from tests.core.sweep.helpers import SMALL_SWEEP, sweep_file

TIMEOUT_MS = 600_000  # three trials, each a worker importing torch and SB3 on a loaded 2-core machine

# random seed 1 asks lr 1e-7, 0.01, 1e-7: two values of the objective, so importance has something to say
THREE_TRIALS = {**SMALL_SWEEP, "name": "tab-sweep", "n_trials": 3, "seed": 1, "pruner": "none",
                "base": {**SMALL_SWEEP["base"], "timesteps": 1000}}


def table(panel: SweepsPanel) -> list[dict[str, str]]:
    t = panel.table
    headers = [t.horizontalHeaderItem(c).text() for c in range(t.columnCount())]
    return [{h: t.item(r, c).text() for c, h in enumerate(headers)} for r in range(t.rowCount())]


@pytest.mark.gui
@pytest.mark.training
@pytest.mark.timeout(900)
def test_sweeps_tab_runs_a_sweep_file_and_shows_its_study(qtbot, tmp_path, runs_dir):
    panel = SweepsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.resize(1200, 850)
    panel.show()
    qtbot.waitUntil(lambda: "No sweep in this runs folder" in panel.state_label.text(), timeout=10_000)
    assert not panel.save_button.isEnabled()

    panel.run_file(sweep_file(tmp_path, THREE_TRIALS))
    qtbot.waitUntil(lambda: panel.name == "tab-sweep", timeout=60_000)
    qtbot.waitUntil(lambda: panel.report is not None and panel.report["state"] == "finished", timeout=TIMEOUT_MS)
    wait_for_background()
    qtbot.waitUntil(lambda: bool(panel.report.get("importances")), timeout=30_000)

    rows = table(panel)
    assert [r["#"] for r in rows] == ["0", "1", "2"]
    assert [r["State"] for r in rows] == ["complete"] * 3
    assert [r["ppo.learning_rate"] for r in rows] == ["1e-07", "0.01", "1e-07"]
    assert all(r["Run"].endswith(f"tab-sweep-t{i}") for i, r in enumerate(rows))
    assert panel.objective.point_count == 3
    assert set(panel.importance.values) == {"ppo.learning_rate", "ppo.n_epochs"}
    assert panel.parallel.axis_names == ["ppo.learning_rate", "ppo.n_epochs", "objective"]
    assert len(panel.parallel.lines) == 3
    assert "tab-sweep: finished" in panel.state_label.text()
    assert not panel.stop_button.isEnabled() and not panel.resume_button.isEnabled()

    with qtbot.waitSignal(panel.run_activated, timeout=5_000) as opened:
        panel.table.cellDoubleClicked.emit(1, 0)
    assert opened.args[0] == runs_dir / rows[1]["Run"]

    assert panel.save_button.isEnabled()
    path = panel.save_best_as_preset("cartpole-best")
    cfg = resolve("cartpole-best").config
    assert path.is_file() and cfg.algo == "PPO" and cfg.params.learning_rate == 0.01
    assert cfg.budget.total_timesteps == 1000 and cfg.budget.eval_every == 500
    panel.grab().save(str(tmp_path / "sweeps.png"))
