"""A run the GPU guard paused reads as paused with its reason (Runs tab, Monitor); an ended run's energy is a column."""

from __future__ import annotations

import json

from PySide6.QtCore import QSettings

from app.monitor.panel import MonitorPanel
from app.runs.panel import RunsPanel
from app.runs.rows import COLUMNS
from app.settings import GRID_SETTING, set_setting
from core.run.store import run_info
from tests.app.fake_runs import make_fake_run

REASON = "GPU 0 at 88 C, at or above 85 C for 10 s: training paused until it is below 75 C"


def test_the_runs_tab_lists_a_paused_run_with_its_reason_and_an_ended_runs_energy(qtbot, runs_dir, tmp_path):
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path))
    paused = make_fake_run(runs_dir, state="paused", name="hot", pause_reason=REASON)
    ended = make_fake_run(runs_dir, state="finished", name="done")
    (ended / "summary.json").write_text(json.dumps({"timesteps": 100, "energy_kwh": 0.0123, "state": "finished"}))
    assert run_info(paused).state == "paused" and run_info(paused).pause_reason == REASON  # its worker (this test) lives
    set_setting(GRID_SETTING, 400.0)
    panel = RunsPanel(runs_dir)
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 2 and not panel._busy, timeout=10_000)
    items = {panel.tree.topLevelItem(i).text(0): panel.tree.topLevelItem(i) for i in range(2)}
    hot = next(item for label, item in items.items() if "hot" in label)
    done = next(item for label, item in items.items() if "done" in label)
    assert hot.text(COLUMNS.index("State")) == "paused" and REASON in hot.toolTip(COLUMNS.index("State"))
    assert done.text(COLUMNS.index("Energy")) == "12.3 Wh" and hot.text(COLUMNS.index("Energy")) == ""
    assert "CO2 estimate 4.9 g at 400 g/kWh" in done.toolTip(COLUMNS.index("Energy"))
    panel.select(paused.name)
    qtbot.waitUntil(lambda: "paused: " + REASON in panel.details.toPlainText(), timeout=5000)


def test_the_monitor_says_paused_and_why(qtbot):
    panel = MonitorPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.set_run_state("paused", REASON)
    assert panel.status.isVisibleTo(panel) and panel.status.text().startswith("Paused: " + REASON)
    panel.set_run_state("running")
    assert "Paused" not in panel.status.text()
