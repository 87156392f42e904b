"""Without GPU data the four GPU plots fold to one line that says why, and unfold when GPU readings come (issue 42:
on a machine without an NVIDIA GPU, four plots saying "No GPU data" took half a laptop's Monitor)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from app.plots.system_area import SystemArea
from app.plots.system_plots import NO_GPU_READINGS, SystemPlots
from core.run.cache.columns import telemetry_batch
from tests.app.fake_runs import gpu_lines


def shown_area(qtbot) -> tuple[QWidget, SystemArea, SystemPlots]:
    holder = QWidget()  # owns the area (kept by the caller: qtbot does not keep it alive), closed once at the end
    qtbot.addWidget(holder)
    plots = SystemPlots()
    area = SystemArea(plots, holder)
    holder.resize(700, 400)
    holder.show()
    return holder, area, plots


def feed(plots: SystemPlots, lines: list[dict]) -> None:
    batch = telemetry_batch(lines)
    if batch.unavailable:
        plots.set_unavailable(batch.unavailable)
    for part in batch.parts:
        plots.add_series(part.series)


def test_no_nvml_folds_the_gpu_plots_to_one_line_and_gpu_readings_unfold_them(qtbot):
    _holder, area, plots = shown_area(qtbot)
    folds: list[bool] = []
    area.folded.connect(folds.append)
    assert not area.is_folded() and all(p.isVisible() for p in plots.gpu_widgets())
    feed(plots, [{"t": 1e9, "kind": "status", "nvml": False, "reason": "NVML shared library not found"},
                 {"t": 1e9 + 1, "process_cpu_pct": 80.0, "host_memory_bytes": 2**30, "host_memory_measure": "pss"}])
    assert area.is_folded() and folds == [True]
    assert area.note.isVisible() and area.note.text() == "No GPU data: NVML shared library not found"
    assert area.note.height() <= 1.5 * area.note.fontMetrics().height()  # one line
    assert not any(p.isVisible() for p in plots.gpu_widgets())
    assert plots.plots["process_cpu_pct"].isVisible() and plots.plots["host_memory_bytes"].isVisible()
    assert area.maximumHeight() <= area.note.height() + 4 + 2 * plots.plots["process_cpu_pct"].minimumHeight()
    feed(plots, gpu_lines(5, t0=1e9 + 2))  # NVML came back (a driver installed, a run on another machine)
    assert not area.is_folded() and folds == [True, False]
    assert all(p.isVisible() for p in plots.gpu_widgets()) and not area.note.isVisible()
    assert area.maximumHeight() > 10_000


def test_host_readings_alone_fold_the_gpu_plots_and_a_cleared_area_unfolds(qtbot):
    _holder, area, plots = shown_area(qtbot)
    feed(plots, [{"t": 1e9, "process_cpu_pct": 80.0, "rss_bytes": 2**30}])  # a run recorded without NVML's status
    assert area.is_folded() and area.note.text() == f"No GPU data: {NO_GPU_READINGS}"
    plots.clear()  # another run: nothing known of its GPUs yet
    assert not area.is_folded() and all(p.isVisible() for p in plots.gpu_widgets())
