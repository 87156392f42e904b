"""Throttle reasons on the GPU plots: shaded spans where NVML said the clocks were slowed, named in the readout."""

from __future__ import annotations

import time

from app.monitor.panel import MonitorPanel
from core.run.cache.columns import throttle_spans
from tests.app.fake_runs import gpu_lines


def test_spans_cover_slowed_samples_and_skip_idle_and_gaps():
    lines = [{"t": 100 + i, "gpu": 0, "throttle_reasons": mask}
             for i, mask in enumerate([0, 0x4, 0x4, 0x1, 0x1, 0x40, 0, 0, 0, 0, 0, 0, 0x4])]
    # 0x1 (GPU idle) is no slowdown; 101..105 is one span (gap of 3 s <= 5 s); 112 a span of its own
    assert throttle_spans(lines) == [(101.0, 105.0, 0x44), (112.0, 112.0, 0x4)]
    assert throttle_spans([{"t": 1, "gpu": 0, "throttle_reasons": None}]) == []


def test_the_gpu_plots_shade_slowed_spans_and_the_readout_names_the_reasons(qtbot):
    panel = MonitorPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 800)
    panel.show()
    t0 = time.time() - 60
    lines = gpu_lines(50, t0=t0)
    for i, line in enumerate(lines):
        line["throttle_reasons"] = 0x44 if 10 <= i < 30 else 0x1
    panel.add_telemetry(lines[:20])
    panel.add_telemetry(lines[20:])  # the span goes on in the next batch: one span, not two
    gpu = panel.gpu
    assert len(gpu.throttled) == 1
    start, end, bits = gpu.throttled[0]
    assert (start, end, bits) == (lines[10]["t"], lines[29]["t"], 0x44)
    for field, plot in gpu.plots.items():
        regions = [item for item in plot.getPlotItem().items if type(item).__name__ == "LinearRegionItem"]
        assert len(regions) == (1 if field in ("memory_used_bytes", "temperature_c", "utilization_pct", "power_w") else 0)
    readout = gpu.plots["temperature_c"].readout_at(lines[15]["t"])
    assert "clocks slowed: power cap, thermal slowdown (hardware)" in readout
    assert "clocks slowed" not in gpu.plots["temperature_c"].readout_at(lines[45]["t"])
    gpu.clear()
    assert gpu.throttled == [] and not [i for i in gpu.plots["power_w"].getPlotItem().items
                                        if type(i).__name__ == "LinearRegionItem"]
