"""Tune...: the throughput tune of the config in the forms (``core.throughput``), its table filling in as probes end.

The tune runs on a pool thread (``app.threads.background``); its rows and progress cross to the GUI
thread through this dialog's signals. Cancel ends the running probe (and its process tree).
The pick is saved as the preset ``tuned-<algo>-<env>``, as ``rlpanel tune`` does (``preset_saved``:
the preset list shows it at once, not after a restart), and "Use this" offers that preset: the
Configure panel selects it (``preset_chosen``). Where no preset was written (a tune cancelled after
its first measurements), "Use this" hands the pick's settings over as edits (``pick_chosen``). The
line above the table says which machine the tune measures (its devices; not the target GPU a preset
plans for).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.theme import error_color
from app.threads.background import run_in_background
from core.config.schema import RunConfig
from core.throughput.preset import save_tuned_preset
from core.throughput.search import TuneOptions, Tuner
from core.throughput.table import COLUMNS, TuneResult, TuneRow, cells, pick_reason

__all__ = ["COLUMNS", "TuneDialog"]
FIGURES = ("steps/s", "host MiB", "GPU MiB", "collect/train %")  # right-aligned columns


class TuneDialog(QDialog):
    """Runs one tune of ``config`` at a time; "Use this" emits ``preset_chosen(name)`` for the preset the pick was
    saved as, else ``pick_chosen(dict)`` with the pick's settings."""

    pick_chosen = Signal(object)
    preset_saved = Signal(str)   # the preset the pick was saved as, once written
    preset_chosen = Signal(str)  # "Use this" on a saved pick: that preset
    row_ready = Signal(int, object)      # from the pool thread: (index, TuneRow)
    progress_ready = Signal(float, str)  # from the pool thread: (share of the budget, text)
    machine_ready = Signal(str)          # from the pool thread: which machine the tune measures

    def __init__(self, config: RunConfig, parent: QWidget | None = None):
        super().__init__(parent)
        self.config = config
        self.setWindowTitle(f"Tune throughput: {config.algo} on {config.env.label}")
        self.probe_s: float | None = None  # seconds per probe (None: from the budget)
        self.tuner: Tuner | None = None
        self.tune_result: TuneResult | None = None
        self.error: str | None = None
        self._build_controls()
        self._build_table()
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.status = QLabel("Your config is tried on the CPU and on each GPU here first, and with SBX (JAX) where it is "
                             "installed, then the search follows the faster one. Each candidate trains a few seconds; "
                             "ones the estimate says do not fit are listed, never run.")
        self.status.setWordWrap(True)
        self.machine = QLabel("")
        self.machine.setWordWrap(True)
        self.machine.setVisible(False)
        self._lay_out()
        app = QApplication.instance()
        if app is not None:  # the window closing ends a running tune's probe instead of waiting it out
            app.aboutToQuit.connect(self.cancel)
        self.row_ready.connect(self._show_row)
        self.progress_ready.connect(self._show_progress)
        self.machine_ready.connect(self._show_machine)
        self.resize(1000, 420)

    def _build_controls(self) -> None:
        """Budget, Allow learning changes, Start, Cancel, Use this, Close."""
        self.budget = QSpinBox()
        self.budget.setRange(10, 3600)
        self.budget.setValue(120)
        self.budget.setSuffix(" s")
        self.budget.setToolTip("Time for the whole tune: each candidate is a short real training of a few seconds")
        self.allow_learning = QCheckBox("Allow learning changes")
        self.allow_learning.setToolTip("Let the pick change what is learned: PPO's rollout and batch size, "
                                       "gradient steps per env step. Off: those rows are shown, never picked.")
        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.use_button = QPushButton("Use this")
        self.use_button.setEnabled(False)
        self.use_button.setToolTip("Load the fastest fitting settings into the form")
        self.use_button.clicked.connect(self.use_pick)
        self.close_button = QPushButton("Close")
        self.close_button.clicked.connect(self.reject)

    def _build_table(self) -> None:
        """The candidates tried: a row each, notes wrapped."""
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(True)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        # a later, longer config narrows the note column: the rows' heights follow, so a long note wraps again
        header.sectionResized.connect(lambda *_: self.table.resizeRowsToContents())

    def _lay_out(self) -> None:
        options = QHBoxLayout()
        options.addWidget(QLabel("Budget"))
        options.addWidget(self.budget)
        options.addWidget(self.allow_learning)
        options.addStretch(1)
        options.addWidget(self.start_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.use_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(options)
        layout.addWidget(self.machine)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

    @property
    def running(self) -> bool:
        return self.tuner is not None

    def start(self) -> None:
        if self.running:
            return
        self.table.setRowCount(0)
        self.tune_result, self.error = None, None
        self.use_button.setEnabled(False)
        options = TuneOptions(budget_s=float(self.budget.value()), allow_learning_changes=self.allow_learning.isChecked(),
                              probe_s=self.probe_s)
        tuner = Tuner(self.config, options, on_row=self.row_ready.emit, on_progress=self.progress_ready.emit,
                      on_machine=self.machine_ready.emit)
        self.tuner = tuner
        for widget in (self.start_button, self.budget, self.allow_learning):
            widget.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        config = self.config

        def work() -> TuneResult:
            result = tuner.run()
            if result.picked is not None and not tuner.cancel_event.is_set():
                save_tuned_preset(config, result)
            return result

        run_in_background(work, self._finished, self._failed)

    def cancel(self) -> None:
        if self.tuner is not None:
            self.tuner.cancel()
            self.status.setText("Cancelling: ending the running probe...")
            self.cancel_button.setEnabled(False)

    def use_pick(self) -> None:
        result = self.tune_result
        if result is not None and result.picked is not None:
            if result.preset:
                self.preset_chosen.emit(result.preset)
            else:
                self.pick_chosen.emit(dict(result.picked.settings))
            self.accept()

    def reject(self) -> None:
        self.cancel()  # closing ends the tune: its probes would otherwise run on unseen
        super().reject()

    # --- answers from the pool thread ----------------------------------------------------------

    def _show_row(self, index: int, row: TuneRow) -> None:
        if index >= self.table.rowCount():
            self.table.setRowCount(index + 1)
        for column, text in enumerate(cells(row)):
            item = QTableWidgetItem(text)
            if COLUMNS[column] in FIGURES:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if row.note:
                item.setToolTip(row.note)
            if row.fits is not True or (COLUMNS[column] == "steps/s" and row.steps_per_s is None):
                item.setForeground(error_color(self.table))
            self.table.setItem(index, column, item)
        self.table.resizeRowsToContents()  # a long note (why a row did not run) wraps instead of ending in "..."
        self.table.scrollToBottom()

    def _show_machine(self, line: str) -> None:
        self.machine.setText(line[:1].upper() + line[1:] + ".")
        self.machine.setVisible(True)

    def _show_progress(self, share: float, text: str) -> None:
        self.progress.setValue(int(share * 100))
        self.status.setText(text)

    def _finished(self, result: TuneResult) -> None:
        self.tuner, self.tune_result = None, result
        self._idle()
        self.progress.setValue(100)
        picked = result.picked
        if picked is None:
            self.status.setText(f"Nothing measured ({result.stopped}); hover a row for why, or give it more time.")
            return
        index = result.pick if result.pick is not None else 0
        self.table.selectRow(index)
        for column in range(self.table.columnCount()):
            item = self.table.item(index, column)
            if item is not None:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
        speedup = result.speedup()
        ratio = f", {speedup:.2f}x your config" if speedup else ""
        saved = f"; saved as preset {result.preset}" if result.preset else ""
        reason = pick_reason(result)
        self.status.setText(f"Pick: row {index + 1}, {picked.steps_per_s or 0:,.0f} steps/s{ratio}{saved} "
                            f"(search ended: {result.stopped}).{' ' + reason[:1].upper() + reason[1:] + '.' if reason else ''}")
        self.use_button.setEnabled(True)
        self.use_button.setToolTip(f"Select preset {result.preset}: your config with the pick" if result.preset
                                   else "Load the fastest fitting settings into the form")
        if result.preset:
            self.preset_saved.emit(result.preset)

    def _failed(self, message: str) -> None:
        self.tuner, self.error = None, message
        self._idle()
        self.status.setText(f"The tune failed: {message}")

    def _idle(self) -> None:
        for widget in (self.start_button, self.budget, self.allow_learning):
            widget.setEnabled(True)
        self.cancel_button.setEnabled(False)
