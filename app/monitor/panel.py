"""The Monitor tab: the followed run's header, chart controls and live plots, redrawn from a ~50 ms timer.

Three areas in a splitter: the episode reward; a grid of small charts (speed and every scalar SB3
logs, ``ScalarGrid``); the machine (GPU memory, temperature, utilization, power, the run's CPU
and RAM, ``SystemPlots``). The header says how far the run is and, while it runs, the time left
from its speed over the last minutes (``header.RunHeader``). The status line under it says which
readings are past a threshold; under it, where the run's time goes (``TimeSplitView``). Data comes
in as column batches built off the GUI thread (``core.run.cache.columns``); each run gets its own plot
state (``clear``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.monitor.header import RunHeader, show_alerts
from app.monitor.time_split_view import TimeSplitView
from app.plots.live_plot import LivePlot
from app.plots.on_screen import Clip
from app.plots.reward_plot import RewardPlot
from app.plots.scalar_grid import ScalarGrid
from app.plots.system_area import SystemArea
from app.plots.system_plots import SystemPlots
from app.settings import get_setting, set_setting
from app.widgets.toolbar import STRETCH, Labelled, panel_toolbar
from app.widgets.wrap_label import wrap_long_words
from core.estimate.result import FitEstimate
from core.run.cache.columns import MetricsBatch, TelemetryBatch, metrics_batch, telemetry_batch
from core.run.states import TERMINAL

REDRAW_MS = 50
SOON_MS = 15  # new records are drawn this soon after the last redraw, not at the next tick (~a frame)
FRAME_S = 0.012  # a timer's redraw draws plots for about this long, then lets the GUI thread breathe
LOADING_REDRAW_S = 0.5  # while a long history loads, the plots show how far it got twice a second
HOLD_S = LOADING_REDRAW_S  # a run just opened: its plots wait this long at most after its first data for the rest
HOLD_FIRST_S = 2.0  # ... and this long at most for its first data (a reader that says nothing cannot freeze them)
SETTLE_TURNS = 3  # turns of the event loop a released run's plots may take to settle before they are painted
SPEED_RECORDS = 120  # progress records that may still be in the speed's window (one a second, a minute)
IDLE_TITLE = "No run followed: the GPU plots show the live GPU monitor."


class MonitorPanel(QWidget):
    """Plots of one run (or of the idle GPUs); fed by ``add_batch`` / ``add_telemetry_batch``."""

    redrawn = Signal(float)  # seconds the last redraw took
    close_requested = Signal()  # stop following the run: back to the live GPU monitor
    tensorboard_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reward_plot = RewardPlot()
        self.scalars = ScalarGrid()
        self.gpu = SystemPlots()
        self.last_record_t: float | None = None
        self.run_dir: Path | None = None
        self.run_state: str | None = None
        self.pause_reason: str | None = None  # why the followed run is paused (its status says)
        self._last_progress: dict[str, Any] | None = None
        self._loading: float | None = None  # the share of the followed run's history read, while it loads
        self._held = False  # the plots of a run just opened are not drawn until its history is in (``_hold``)
        self._fed = False  # data came while held
        self._releasing = False  # released: the plots get their data and settle, then are painted (``_settle``)
        self._settling = 0  # turns taken so far to settle a released run's plots
        self._last_redraw = 0.0

        self.header = RunHeader(IDLE_TITLE)  # the run's title, its progress and Close run
        self.title, self.progress, self.close_button = self.header.title, self.header.progress, self.header.close_button
        self.close_button.clicked.connect(self.close_requested)
        self.status = wrap_long_words(QLabel())  # "Could not write <path>"
        self.status.hide()
        self.time_split = TimeSplitView()  # where the run's time goes, and the advice from it (hidden until known)
        self._build_controls()

        self.system = SystemArea(self.gpu)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("monitorSplitter")
        for widget in (self.reward_plot, self.scalars, self.system):
            self.splitter.addWidget(widget)
        self.splitter.setChildrenCollapsible(False)  # a chart row dragged away read as no charts at all
        self.splitter.setSizes([300, 300, 330])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self._controls)
        layout.addWidget(self.status)
        layout.addWidget(self.time_split)
        layout.addWidget(self.splitter, 1)

        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._redraw_tick)
        self._timer.start()
        # New data is drawn at once rather than at the next tick (up to 50 ms later: half the
        # latency goal of a record on screen), but never sooner than SOON_MS after the last redraw.
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.timeout.connect(self._redraw_tick)
        self._pending: list[LivePlot] = []  # the plots a timer's redraw left for its next turn (FRAME_S)
        self._pass = (0.0, False)  # that redraw's seconds so far, and whether anything changed
        self._hold_timer = QTimer(self)
        self._hold_timer.setSingleShot(True)
        self._hold_timer.timeout.connect(self._release)
        # a chart scrolled into view draws what it missed now, not at the next tick
        self.scalars.charts_area.verticalScrollBar().valueChanged.connect(lambda _: self._redraw_soon())

    def _build_controls(self) -> None:
        self.x_mode = QComboBox()
        self.x_mode.addItem("x: timesteps", "step")
        self.x_mode.addItem("x: wall time", "time")
        self.x_mode.setToolTip("What the x axis of the training charts shows (the machine's plots always use wall time)")
        self.x_mode.currentIndexChanged.connect(lambda _: self.set_x_mode(self.x_mode.currentData()))
        self.smoothing = QSlider(Qt.Orientation.Horizontal)
        self.smoothing.setRange(0, 999)
        self.smoothing.setFixedWidth(100)
        self.smoothing.setToolTip("Smoothing, as in TensorBoard: an exponential moving average over the reward and "
                                  "the scalar charts (0: none, 0.999: nearly flat); the raw data stays drawn, faded")
        self.smoothing_label = QLabel()
        self.smoothing_label.setMinimumWidth(40)
        self.smoothing.valueChanged.connect(lambda v: self.set_smoothing(v / 1000))
        self.log_y = QCheckBox("Log y")
        self.log_y.setToolTip("A logarithmic y axis on the speed and scalar charts (values <= 0 are not drawn)")
        self.log_y.toggled.connect(self.scalars.set_log_y)
        self.tensorboard_button = QPushButton("Open in TensorBoard")
        self.tensorboard_button.setToolTip("Start TensorBoard on this run's logs (127.0.0.1, a free port) and open the browser")
        self.tensorboard_button.clicked.connect(self.tensorboard_requested)
        self.save_button = QPushButton("Save plots…")
        self.save_button.setToolTip("Save the plots as they are on screen (PNG), in the run's folder by default")
        # not connect(self.save_plots): PySide passes clicked's `checked` (False) as the path, and the button wrote nothing
        self.save_button.clicked.connect(lambda: self.save_plots())
        self.pause_button = QPushButton("Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip("Freeze the plots; data keeps arriving and shows when you resume")
        self.pause_button.toggled.connect(self.set_paused)
        self.follow_button = QPushButton("Follow")
        self.follow_button.setToolTip("Autoscale every plot and follow new data again (after a zoom or pan)")
        self.follow_button.clicked.connect(self.follow)
        # what does not fit a narrow window goes behind », the least used last
        self._controls = panel_toolbar("monitorControls", (
            self.x_mode, Labelled("Smoothing", self.smoothing, readout=self.smoothing_label), self.log_y, self.scalars.picker,
            STRETCH, self.pause_button, self.follow_button, self.save_button, self.tensorboard_button))
        self.set_smoothing(float(get_setting("monitor/smoothing", 0.0)))

    # --- data ------------------------------------------------------------------------------

    @property
    def speed_plot(self) -> LivePlot:
        return self.scalars.speed

    def all_plots(self) -> list[LivePlot]:
        return [self.reward_plot, *self.scalars.plots(), *self.gpu.widgets()]

    def set_run(self, run_dir: Path | None, title: str) -> None:
        """Show ``run_dir`` (None: the idle GPU monitor): a fresh plot state for it."""
        self.clear()
        self.run_dir = Path(run_dir) if run_dir else None
        self.title.setText(title)
        self.close_button.setVisible(run_dir is not None)
        self.tensorboard_button.setEnabled(run_dir is not None)
        if run_dir is not None:
            self._hold()
        else:
            self._held = False
            self._hold_timer.stop()
            self._show_plots()

    def _hold(self) -> None:
        """Draw nothing of the plots until the run's history is in (``set_loading(None)``; at most ``HOLD_FIRST_S``
        for its first data, then ``HOLD_S`` for the rest): its plots are drawn once with the whole history, not once
        per batch (each drawing lays out and paints every plot's axes again, as their ranges and tick labels change).
        A history that takes longer (a run parsed for the first time) shows how far it got meanwhile."""
        self._held, self._fed, self._releasing = True, False, False
        self._pending = []
        self.splitter.setUpdatesEnabled(False)
        self._hold_timer.start(int(HOLD_FIRST_S * 1000))

    def _fed_while_held(self) -> None:
        """Data came: ``HOLD_S`` more at most for the rest of the history."""
        if self._held and not self._fed:
            self._fed = True
            self._hold_timer.start(int(HOLD_S * 1000))

    def _release(self) -> None:
        """The history is in (or the hold's time passed): the plots get their data, in turns of a frame, settle,
        and are painted once they all have it (``_redraw``, ``_settle``)."""
        self._hold_timer.stop()
        if self._held:
            self._held, self._releasing, self._settling = False, True, 0
            self._pending = []
            self._redraw_tick()

    def _show_plots(self) -> None:
        """The plots are painted from here on."""
        self._releasing, self._settling = False, 0
        if not self.splitter.updatesEnabled():
            self.splitter.setUpdatesEnabled(True)

    @property
    def held(self) -> bool:
        """The plots of a run just opened wait for its history, or are being readied to be painted (``_hold``)."""
        return self._held or self._releasing

    def clear(self) -> None:
        """Nothing of the previous run stays: series, legends, readouts, progress, alerts."""
        self.reward_plot.reset()
        self.scalars.reset()
        self.gpu.clear()
        self.progress.hide()
        self.last_record_t = None
        self.run_state = self.pause_reason = None
        self.header.speed.reset()
        self._last_progress = None
        self._loading = None
        self._pending = []
        self.time_split.reset()
        self._update_status()

    def add_records(self, records: list[dict[str, Any]]) -> None:
        """A batch of metrics records (events go to the log, not here)."""
        self.add_batch(metrics_batch(records))

    def add_batch(self, batch: MetricsBatch) -> None:
        if batch.reset:
            self._pending = []  # a chart left for a redraw's next turn may be gone
            self.reward_plot.reset()
            self.scalars.reset()
            self.header.speed.reset()
        for part in batch.parts:
            if part.after_break:
                self.reward_plot.mark_break()
                self.scalars.mark_break()
                self.header.speed.reset()
            self.reward_plot.add_columns(part.episodes, part.evals, part.episode_weights)
            if part.progress is not None:
                self.scalars.add_speed(*part.progress)
                steps, times, _ = part.progress
                for step, t in zip(steps[-SPEED_RECORDS:].tolist(), times[-SPEED_RECORDS:].tolist(), strict=True):
                    self.header.speed.update(step, t)
            self.scalars.add_scalars(part.train)
        self.time_split.add_batch(batch)
        if batch.last_progress is not None:
            self._last_progress = batch.last_progress
            self._show_progress()
        if batch.records:
            self.last_record_t = time.time()
        self._fed_while_held()
        self._redraw_soon()

    def _redraw_soon(self) -> None:
        if self._soon.isActive() or not self.isVisible() or self._loading is not None:
            return
        since_ms = (time.perf_counter() - self._last_redraw) * 1000
        self._soon.start(max(0, int(SOON_MS - since_ms)))

    def set_run_state(self, state: str | None, pause_reason: str | None = None) -> None:
        """The followed run's state: the time left shows only while it runs; a paused or stalled run says why."""
        self.run_state = state
        self.pause_reason = pause_reason if state in ("paused", "stalled") else None
        self._show_progress()
        self._update_status()

    def _show_progress(self) -> None:
        if self._loading is not None:
            self.header.show_loading(self._loading)
        else:
            self.header.show_progress(self._last_progress, self.run_state)

    def add_telemetry(self, samples: list[dict[str, Any]]) -> None:
        """Telemetry lines (the idle monitor's samples, or a test's)."""
        self.add_telemetry_batch(telemetry_batch(samples))

    def add_telemetry_batch(self, batch: TelemetryBatch) -> None:
        if batch.reset:
            self.gpu.clear()
        if batch.unavailable:
            self.gpu.set_unavailable(batch.unavailable)
        for part in batch.parts:
            if part.after_break:
                self.gpu.mark_break()
            self.gpu.add_series(part.series)
            self.gpu.add_throttled(part.throttled)
        self.gpu.set_latest(batch.latest)
        self._update_status()
        self._fed_while_held()
        self._redraw_soon()

    def set_gpu_unavailable(self, reason: str | None) -> None:
        self.gpu.set_unavailable(reason)

    def set_estimate(self, estimate: FitEstimate | None) -> None:
        """The fit estimate's GPU memory, drawn as a line on the memory plot (none for a CPU run)."""
        self.gpu.set_estimate(estimate.gpu_bytes if estimate is not None else None)

    def set_title(self, text: str) -> None:
        self.title.setText(text)

    def set_loading(self, share: float | None) -> None:
        """The share of a long history read so far, or None once it is all in; it shows in the header's bar, where
        it moves nothing (a line shown above the plots, then hidden, laid out and painted them all twice)."""
        self._loading = share
        self._show_progress()
        if share is None and self._held:
            self._release()

    @property
    def loading(self) -> bool:
        return self._loading is not None

    def _update_status(self) -> None:
        """What is loading, and which readings are past a threshold (while the data is live)."""
        live = self.run_dir is None or self.run_state not in TERMINAL
        show_alerts(self.status, self.gpu.alerts() if live else [], self.run_state, self.pause_reason)

    def alerts(self) -> list[str]:
        return self.gpu.alerts()

    # --- view ------------------------------------------------------------------------------

    def set_x_mode(self, mode: str) -> None:
        for plot in self.all_plots():
            plot.set_x_mode(mode)
        idx = self.x_mode.findData(mode)
        if idx != self.x_mode.currentIndex():
            self.x_mode.setCurrentIndex(idx)

    def set_smoothing(self, weight: float) -> None:
        """TensorBoard's smoothing (0 to 0.999) on the reward and the scalar charts."""
        weight = round(min(max(weight, 0.0), 0.999), 3)
        self.smoothing_label.setText(f"{weight:.3f}".rstrip("0").rstrip(".") if weight else "off")
        if self.smoothing.value() != int(round(weight * 1000)):
            self.smoothing.setValue(int(round(weight * 1000)))
            return  # valueChanged comes back here
        self.reward_plot.set_smoothing(weight)
        self.scalars.set_smoothing(weight)
        set_setting("monitor/smoothing", weight)

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
        """Every plot that changed, now (whatever a timer's redraw left for later too; a held run's plots too)."""
        self._hold_timer.stop()
        self._held = False
        changed = self._redraw(None)
        self._show_plots()
        return changed

    def _redraw_tick(self) -> None:
        """The timers' redraw: plots in turn until FRAME_S is spent, the rest at the next turn of the event
        loop, so drawing a long history that just loaded never holds the GUI thread much over a frame."""
        self._redraw(FRAME_S)

    def _redraw(self, budget_s: float | None) -> bool:
        if not self.isVisible() or self._held:
            return False  # a hidden tab costs nothing; it catches up when shown (a held one when released)
        start = time.perf_counter()
        if not self._pending:
            if self._loading is not None and not self._releasing and start - self._last_redraw < LOADING_REDRAW_S:
                return False  # a long history is coming in: redrawing its halves would only slow it down
            self._last_redraw = start
            self._pending, self._pass = self.all_plots(), (0.0, False)
        self._soon.stop()
        spent, changed = self._pass
        clip = Clip()  # the plots' ancestors' shown parts, found once for this turn's plots
        while self._pending:
            changed |= self._pending.pop(0).refresh(clip)  # each plot out of view skips itself
            if budget_s is not None and time.perf_counter() - start >= budget_s:
                break
        spent += time.perf_counter() - start
        self._pass = (spent, changed)
        if self._pending:
            self._soon.start(0)  # the rest once the events that waited meanwhile are handled
            return changed
        if self._releasing:
            if changed and budget_s is not None and self._settling < SETTLE_TURNS:
                self._settle()
                return changed
            self._show_plots()  # every plot has its history: painted once from here
        if changed:
            self.redrawn.emit(spent)
        return changed

    def _settle(self) -> None:
        """Before a released run's plots are painted: what pyqtgraph does as it paints (fit the view to the data,
        which may ask for the lines again) is done now, and drawn at the next turn of the event loop. (pyqtgraph
        still lays an axis out again after its first paint, for the width of its tick labels: one more paint.)"""
        self._settling += 1
        clip = Clip()
        for plot in self.all_plots():
            if plot.in_view(clip):
                plot.scene().prepareForPaint()  # the view fitted to the data (pyqtgraph does it as it paints)
        self._soon.start(0)

    def save_plots(self, path: Path | None = None) -> Path | None:
        """The plots as on screen, as a PNG; the dialog starts in the followed run's folder."""
        if path is None:
            start = self.run_dir or Path(get_setting("monitor/save_dir", str(Path.home())))
            chosen, _ = QFileDialog.getSaveFileName(self, "Save plots", str(start / "monitor.png"), "PNG image (*.png)")
            if not chosen:
                return None
            path = Path(chosen) if Path(chosen).suffix.lower() == ".png" else Path(chosen + ".png")
        if not self.splitter.grab().save(str(path)):
            self.status.setText(f"Could not write {path}")
            self.status.show()
            return None
        if self.run_dir is None:
            set_setting("monitor/save_dir", str(path.parent))
        return path

    def apply_theme(self, background: str, foreground: str) -> None:
        self.reward_plot.set_theme_colors(background, foreground)
        self.gpu.set_theme_colors(background, foreground)
        self.scalars.set_theme_colors(background, foreground)

    def on_shown(self) -> None:
        """Nothing to do: the followed run's records come as they are written."""

    def on_closing(self) -> None:
        """Nothing of its own to stop: the window closes the follower."""
