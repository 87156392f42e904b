"""The memory plots say which figure they draw: the run's own GPU memory before the card's total, the
run's RAM by its measure (PSS, ...), and a run recorded before own memory by its RSS sum."""

from __future__ import annotations

import pytest

from tests.app.fake_runs import gpu_lines
from tests.app.plots.test_plots import make_panel


def with_own_memory(lines: list[dict], every: int = 5, measure: str = "pss") -> list[dict]:
    """Lines as the recorder writes them: own memory on every ``every``-th tick only."""
    for i, line in enumerate(lines):
        if i % every == 0:
            line.update(host_memory_bytes=200 * 2**20 + i, host_memory_measure=measure)
    return lines


def test_gpu_memory_names_the_runs_own_figure_first_and_the_cards_total_with_the_drivers_reserve(qtbot):
    panel = make_panel(qtbot)
    panel.add_telemetry(gpu_lines(3))
    mem = panel.gpu.plots["memory_used_bytes"]
    assert mem.legend_names() == ["this run (NVML)", "card total incl. driver"]
    assert mem.legend.isVisible()
    assert "this run (NVML): its own processes, NVML's per-process figure" in mem.toolTip()
    assert "driver's own reserve" in mem.toolTip()


def test_a_second_gpus_memory_lines_name_it(qtbot):
    panel = make_panel(qtbot)
    panel.add_telemetry(gpu_lines(3) + gpu_lines(3, gpu=1))
    names = panel.gpu.plots["memory_used_bytes"].legend_names()
    assert names == ["this run (NVML)", "card total incl. driver", "this run, GPU 1 (NVML)", "GPU 1 total incl. driver"]


@pytest.mark.parametrize("torch_name", ["torch_reserved", "torch"])  # "torch": a telemetry.jsonl from before
def test_gpu_memory_says_when_the_runs_figure_is_torchs_reserved_memory(qtbot, torch_name):
    panel = make_panel(qtbot)
    lines = gpu_lines(4)
    for line in lines[2:]:
        line["process_memory_source"] = torch_name
    panel.add_telemetry(lines)
    mem = panel.gpu.plots["memory_used_bytes"]
    assert mem.legend_names()[:2] == ["this run (NVML)", "this run (torch reserved, no CUDA context)"]
    assert mem.buffer("torch0").size == 2 and mem.buffer("proc0").size == 2
    assert "the CUDA context (~0.7 GiB) not included" in mem.toolTip()


def test_gpu_memory_on_windows_names_the_wddm_counter_it_draws(qtbot):
    """Under WDDM NVML has no per-process figure: the recorder's lines name Windows' counter, and so does the plot."""
    panel = make_panel(qtbot)
    lines = gpu_lines(5)
    lines[0]["process_memory_source"] = "torch_reserved"  # before the counter listed the worker's CUDA context
    for line in lines[1:]:
        line["process_memory_source"] = "wddm_counter"
        line["process_memory_bytes"] = 2_402_287_616
    panel.add_telemetry(lines)
    mem = panel.gpu.plots["memory_used_bytes"]
    assert mem.legend_names() == ["this run (torch reserved, no CUDA context)", "this run (WDDM counter)",
                                  "card total incl. driver"]
    assert mem.buffer("wddm0").size == 4 and mem.buffer("torch0").size == 1
    assert abs(mem.buffer("wddm0").values[0] - 2_402_287_616 / 2**30) < 1e-9  # GiB
    assert "this run (WDDM counter): its own processes, Windows' GPU Process Memory counter" in mem.toolTip()


def test_ram_is_the_runs_own_memory_named_by_its_measure_not_the_rss_sum(qtbot):
    panel = make_panel(qtbot)
    lines = with_own_memory(gpu_lines(10))
    panel.add_telemetry(lines[:6])
    panel.add_telemetry(lines[6:9])  # a batch between own memory reads: its RSS sum is not drawn
    ram = panel.gpu.plots["host_memory_bytes"]
    assert ram.title == "Run RAM (PSS)"
    assert "a page shared by several processes split between them" in ram.toolTip()
    assert ram.series_keys() == ["pss"] and ram.buffer("pss").size == 2
    assert ram.legend_names() == ["this run (PSS)"]
    assert abs(ram.buffer("pss").values[0] - 200 / 1024) < 1e-6  # GiB
    assert "this run (PSS)" in ram.readout_at(lines[0]["t"])


def test_ram_of_a_run_recorded_before_own_memory_is_its_rss_sum_and_says_so(qtbot):
    panel = make_panel(qtbot)
    panel.add_telemetry(gpu_lines(4))  # rss_bytes only, as every run folder before
    ram = panel.gpu.plots["host_memory_bytes"]
    assert ram.title == "Run RAM (RSS sum)" and "counted once per process" in ram.toolTip()
    assert ram.legend_names() == ["this run (RSS sum)"] and ram.buffer("rss_bytes").size == 4
    panel.clear()  # another run
    assert ram.title == "Run RAM" and ram.toolTip() == ""
    panel.add_telemetry(with_own_memory(gpu_lines(4), measure="private"))
    assert ram.title == "Run RAM (private bytes)" and ram.series_keys() == ["private"]


def test_a_run_whose_measure_changed_shows_both_named_in_the_legend(qtbot):
    panel = make_panel(qtbot)
    panel.add_telemetry(with_own_memory(gpu_lines(6), every=1)[:3])
    panel.add_telemetry(with_own_memory(gpu_lines(6), every=1, measure="rss")[3:])  # a process refused PSS
    ram = panel.gpu.plots["host_memory_bytes"]
    assert ram.legend_names() == ["this run (PSS)", "this run (RSS sum)"] and ram.legend.isVisible()
    assert ram.title == "Run RAM"
