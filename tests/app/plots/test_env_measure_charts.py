"""The env's own measures (episode records' ``m``) are charts of the scalar grid, first after the speed."""

from __future__ import annotations

import time

from app.monitor.panel import MonitorPanel


def test_env_measures_get_a_chart_each_before_the_losses(qtbot):
    panel = MonitorPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 800)
    panel.show()
    now = time.time()
    panel.add_records([{"kind": "train", "step": 10, "t": now, "train/value_loss": 1.0}])
    panel.add_records([{"kind": "episode", "step": 20 * i, "t": now + i, "reward": 1.0, "length": 20,
                        "m": {"co2_kg": 5.0 - i, "comfort_pct": 90.0}} for i in range(5)]
                      + [{"kind": "episode", "step": 200, "t": now + 9, "reward": 1.0, "length": 20}])
    assert list(panel.scalars.charts) == ["env/co2_kg", "env/comfort_pct", "train/value_loss"]
    shown = panel.scalars.shown_plots()
    assert shown[1] is panel.scalars.charts["env/co2_kg"]  # right after the speed chart
    buf = panel.scalars.charts["env/co2_kg"].buffer("value")
    assert buf.size == 5 and list(buf.values[:5]) == [5.0, 4.0, 3.0, 2.0, 1.0]
