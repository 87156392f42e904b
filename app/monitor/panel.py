"""The Monitor tab: the followed run's header and its live plots, redrawn from a ~50 ms timer."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.plots.gpu_plots import GpuPlots
from app.plots.live_plot import LivePlot
from app.plots.reward_plot import RewardPlot
from app.plots.training_plots import LossPlot, SpeedPlot
from core.fit.result import FitEstimate
from core.util.text import clock

REDRAW_MS = 50


class MonitorPanel(QWidget):
    """Plots of one run (or of the idle GPUs); fed by ``add_records`` / ``add_telemetry``."""

    redrawn = Signal(float)  # seconds the last redraw took

    def __init__(self, parent=None):
        super().__init__(parent)
        self.reward_plot = RewardPlot()
        self.speed_plot = SpeedPlot()
        self.loss_plot = LossPlot()
        self.gpu = GpuPlots()
        self.last_record_t: float | None = None

        self.title = QLabel("No run selected: the GPU plots show the idle monitor.")
        self.title.setObjectName("monitorTitle")
        self.title.setStyleSheet("#monitorTitle { font-weight: 600; }")
        self.progress = QProgressBar()
        self.progress.setMinimumWidth(260)
        self.progress.setMaximumWidth(380)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.x_mode = QComboBox()
        self.x_mode.addItem("x: timesteps", "step")
        self.x_mode.addItem("x: wall time", "time")
        self.x_mode.setToolTip("What the x axis of the training plots shows (GPU plots always use wall time)")
        self.x_mode.currentIndexChanged.connect(lambda _: self.set_x_mode(self.x_mode.currentData()))
        self.pause_button = QPushButton("Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip("Freeze the plots; data keeps arriving and shows when you resume")
        self.pause_button.toggled.connect(self.set_paused)
        self.follow_button = QPushButton("Follow")
        self.follow_button.setToolTip("Autoscale every plot and follow new data again (after a zoom or pan)")
        self.follow_button.clicked.connect(self.follow)

        bar = QHBoxLayout()
        bar.addWidget(self.title, 1)
        bar.addWidget(self.progress)
        bar.addWidget(self.x_mode)
        bar.addWidget(self.pause_button)
        bar.addWidget(self.follow_button)

        grid = QGridLayout()
        grid.setSpacing(4)
        grid.addWidget(self.reward_plot, 0, 0, 1, 2)
        grid.addWidget(self.speed_plot, 1, 0)
        grid.addWidget(self.loss_plot, 1, 1)
        gpu = self.gpu.widgets()
        for i, plot in enumerate(gpu):
            grid.addWidget(plot, 2 + i // 2, i % 2)
        grid.setRowStretch(0, 3)
        for row in (1, 2, 3):
            grid.setRowStretch(row, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addLayout(grid, 1)

        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.redraw)
        self._timer.start()

    # --- data ------------------------------------------------------------------------------

    def all_plots(self) -> list[LivePlot]:
        return [self.reward_plot, self.speed_plot, self.loss_plot, *self.gpu.widgets()]

    def clear(self) -> None:
        for plot in (self.reward_plot, self.speed_plot, self.loss_plot):
            plot.clear_data()
        self.gpu.clear()
        self.progress.hide()
        self.last_record_t = None

    def add_records(self, records: list[dict]) -> None:
        """Route a batch of metrics records to their plots (events go to the log, not here)."""
        by_kind: dict[str, list[dict]] = {"episode": [], "eval": [], "progress": [], "train": []}
        for rec in records:
            bucket = by_kind.get(rec.get("kind"))
            if bucket is not None:
                bucket.append(rec)
        self.reward_plot.add_records(by_kind["episode"], by_kind["eval"])
        self.speed_plot.add_records(by_kind["progress"])
        self.loss_plot.add_records(by_kind["train"])
        if by_kind["progress"]:
            self._show_progress(by_kind["progress"][-1])
        if records:
            self.last_record_t = time.time()

    def _show_progress(self, last: dict) -> None:
        """Steps (or a baseline's episodes) done of the budget, and the time left at the current speed."""
        if last.get("episodes_total"):  # a baseline counts episodes, not steps
            done, total, unit = last.get("episodes") or 0, last["episodes_total"], "episodes"
        else:
            done, total, unit = last.get("step") or 0, last.get("total") or 0, "steps"
        if not total:
            return
        self.progress.setRange(0, 1000)
        self.progress.setValue(int(1000 * min(1.0, done / total)))
        text = f"{done:,} / {total:,} {unit}"
        fps = last.get("fps") or 0
        if unit == "steps" and fps > 0 and total > done:
            text += f" · {clock((total - done) / fps)} left"
        self.progress.setFormat(text)
        self.progress.setToolTip(f"{fps:,.0f} steps/s" if fps else "")
        self.progress.show()

    def add_telemetry(self, samples: list[dict]) -> None:
        self.gpu.add_samples(samples)

    def set_gpu_unavailable(self, reason: str | None) -> None:
        self.gpu.set_unavailable(reason)

    def set_estimate(self, estimate: FitEstimate | None) -> None:
        """The fit estimate's GPU memory, drawn as a line on the memory plot (none for a CPU run)."""
        self.gpu.set_estimate(estimate.gpu_bytes if estimate is not None else None)

    def set_title(self, text: str) -> None:
        self.title.setText(text)

    # --- view ------------------------------------------------------------------------------

    def set_x_mode(self, mode: str) -> None:
        for plot in self.all_plots():
            plot.set_x_mode(mode)
        idx = self.x_mode.findData(mode)
        if idx != self.x_mode.currentIndex():
            self.x_mode.setCurrentIndex(idx)

    def set_paused(self, paused: bool) -> None:
        for plot in self.all_plots():
            plot.paused = paused
        self.pause_button.setText("Resume plots" if paused else "Pause")
        if self.pause_button.isChecked() != paused:
            self.pause_button.setChecked(paused)

    def follow(self) -> None:
        self.set_paused(False)
        for plot in self.all_plots():
            plot.follow()

    def redraw(self) -> bool:
        if not self.isVisible():
            return False  # a hidden tab costs nothing; it catches up when shown
        start = time.perf_counter()
        changed = any([plot.refresh() for plot in self.all_plots()])
        if changed:
            self.redrawn.emit(time.perf_counter() - start)
        return changed

    def apply_theme(self, background: str, foreground: str) -> None:
        for plot in self.all_plots():
            plot.set_theme_colors(background, foreground)
