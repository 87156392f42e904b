"""Open the real window on a laptop screen, follow a run that trains without a GPU, and print what the Monitor does
with its room (``tests/app/layout/test_chart_room.py``):

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json QT_SCALE_FACTOR=1.5 python -m tests.app.layout.monitor_room RUNS [PNG]

prints one JSON object ``{"screen": [w, h], "window": [w, h], "problems": [...], "measures": {...}}``. RLPANEL_HOME
should point at a scratch folder: the window's settings go there.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QAbstractSlider, QApplication, QWidget

from tests.app.fake_runs import append_jsonl, make_fake_run
from tests.app.layout.tour import settle

MIN_CHART_PX = 100
KEYS = ["train/learning_rate", "train/entropy_loss", "train/loss", "train/value_loss", "train/policy_gradient_loss",
        "train/approx_kl", "train/clip_fraction", "train/explained_variance", "train/clip_range"]
REASON = "NVML shared library not found"


def live_run_without_gpu(runs_dir: Path) -> Path:
    """A running run 100,000 steps in (its last 1,000 on the charts: ticks 200 steps apart read '100.2k'), one
    train record of nine scalars, a progress record and a cycle record every 20 steps, no GPU readings."""
    run = make_fake_run(runs_dir, state="running", name="live", device="cpu")
    now = time.time()
    records: list[dict] = []
    for i in range(51):
        step, t = 100_000 + 20 * i, now - 300 + 5 * i
        records += [{"kind": "progress", "step": step, "t": t, "fps": 950.0 + i, "total": 1_000_000},
                    {"kind": "train", "step": step, "t": t, **{k: 0.1 * (j + 1) + i / 1000 for j, k in enumerate(KEYS)}},
                    {"kind": "cycle", "step": step, "t": t, "n": 1, "collect_s": 3.0, "train_s": 1.5, "other_s": 0.1}]
    append_jsonl(run / "metrics.jsonl", records)
    append_jsonl(run / "telemetry.jsonl", [{"t": now - 300, "kind": "status", "nvml": False, "reason": REASON}] + [
        {"t": now - 300 + 2 * i, "process_cpu_pct": 90.0, "host_memory_bytes": 2**30, "host_memory_measure": "pss"}
        for i in range(150)])
    return run


def shown_part(widget: QWidget, view: QWidget) -> int:
    """How many of ``widget``'s rows of pixels ``view`` shows."""
    top = widget.mapTo(view, QPoint(0, 0)).y()
    return max(0, min(top + widget.height(), view.height()) - max(top, 0))


def x_labels(plot) -> list[tuple[float, float, str]]:
    """The x axis' labels as it paints them: (left, right, text), left to right."""
    image = QImage(400, 100, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = plot.getPlotItem().getAxis("bottom").generateDrawSpecs(painter)
    finally:
        painter.end()
    return sorted((rect.left(), rect.right(), text) for rect, _flags, text in (specs[2] if specs else []))


def chart_problems(monitor, where: str) -> list[str]:
    """Each chart in the grid's view is whole and >= MIN_CHART_PX; at least one row is in view."""
    view = monitor.scalars.charts_area.viewport()
    problems, in_view = [], 0
    for plot in monitor.scalars.shown_plots():
        part = shown_part(plot, view)
        in_view += part > 0
        if part and (part < plot.height() or part < MIN_CHART_PX):
            problems.append(f"{where}: {plot.title} shows {part} px of its {plot.height()} (view {view.height()} px)")
    if not in_view:
        problems.append(f"{where}: no chart in view (view {view.height()} px)")
    return problems


def measure(monitor, where: str) -> tuple[list[str], dict]:
    """What a user would call squeezed, in words, and the heights behind it."""
    split = monitor.time_split
    problems = chart_problems(monitor, where)

    # every other plot shown keeps 100 px too: the reward and the run's CPU and RAM
    for plot in [monitor.reward_plot, *monitor.gpu.widgets()]:
        if plot.isVisible() and plot.height() < MIN_CHART_PX:
            problems.append(f"{where}: {plot.title} is {plot.height()} px")

    # the collect/train bar, its shares and its advice: one line, the whole advice in its tooltip where it is cut
    line = split.fontMetrics().height()
    if split.height() > 1.5 * line:
        problems.append(f"{where}: the time split takes {split.height()} px, {split.height() / line:.1f} lines")
    advice = split.advice.text()  # a label that wraps is not cut (it takes lines instead: counted above)
    cut = not split.advice.wordWrap() and split.advice.width() < split.advice.fontMetrics().horizontalAdvance(advice)
    if not advice.endswith(".") or (cut and advice not in split.advice.toolTip()):
        problems.append(f"{where}: the advice is cut with no tooltip to read it whole")

    # no GPU data: the four GPU plots fold to one line that says why
    gpu_shown = [p.title for p in monitor.gpu.gpu_widgets() if p.isVisible()]
    if gpu_shown:
        problems.append(f"{where}: GPU plots shown with no GPU data: {gpu_shown}")
    note = getattr(getattr(monitor, "system", None), "note", None)
    if note is None or not note.isVisible() or REASON not in note.text() or note.height() > 1.5 * line:
        problems.append(f"{where}: no one line says why there are no GPU plots")

    # no two x labels of a chart run together ("100.2k100.4k")
    for plot in monitor.scalars.shown_plots():
        labels = x_labels(plot)
        for (_left, right, text), (next_left, _right, next_text) in zip(labels, labels[1:], strict=False):
            if next_left - right < 4:
                problems.append(f"{where}: {plot.title}, {plot.width()} px wide: {text!r} and {next_text!r} run together")
                break

    # the grid scrolls by whole rows: a step, a page, a slider let go past the middle of a row
    bar = monitor.scalars.charts_area.verticalScrollBar()
    if bar.maximum() > 0:
        for action in (QAbstractSlider.SliderAction.SliderSingleStepAdd, QAbstractSlider.SliderAction.SliderPageStepAdd):
            bar.setValue(0)
            bar.triggerAction(action)
            QApplication.processEvents()
            problems += chart_problems(monitor, f"{where} after {action.name}")
        bar.setValue(0)
        bar.setValue(bar.singleStep() // 2 + 1)
        QApplication.processEvents()
        problems += chart_problems(monitor, f"{where} scrolled to a row's middle")
        bar.setValue(0)
        QApplication.processEvents()

    charts = monitor.scalars.shown_plots()
    return problems, {"charts_px": [p.height() for p in charts],
                      "plot_areas_px": [round(p.getPlotItem().vb.height()) for p in charts],
                      "view_px": monitor.scalars.charts_area.viewport().height(), "splitter": monitor.splitter.sizes(),
                      "time_split_px": split.height(), "line_px": line,
                      "machine_px": {p.title: p.height() for p in monitor.gpu.widgets() if p.isVisible()}}


def main() -> None:
    from app.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    runs_dir = Path(sys.argv[1])
    run = live_run_without_gpu(runs_dir)
    window = MainWindow(runs_dir, confirm_close=False, tray=False)
    window.show()
    deadline = time.monotonic() + 120
    while not window.started() and time.monotonic() < deadline:
        settle(app, 0.05)
    window.open_run(run)
    monitor = window.monitor
    while time.monotonic() < deadline and not (
            monitor.time_split.isVisible() and len(monitor.scalars.charts) == len(KEYS) and not monitor.held
            and monitor.gpu.plots["process_cpu_pct"].point_count() > 0):
        settle(app, 0.05)
    monitor.redraw()
    settle(app, 0.5)  # laid out and painted: the views fitted to the data, the axes to their ticks
    avail = window.screen().availableGeometry()
    problems, measures = measure(monitor, f"{avail.width()}x{avail.height()}")
    if len(sys.argv) > 2:
        window.grab().save(sys.argv[2])
    print(json.dumps({"screen": [avail.width(), avail.height()], "window": [window.width(), window.height()],
                      "problems": problems, "measures": measures}), flush=True)
    os._exit(0)  # the measurements are out; the window's threads need no orderly end here


if __name__ == "__main__":
    main()
