"""Evaluate...: play N episodes of one of a run's checkpoints and show how well it does.

The evaluation is ``python -m core.agent.evaluate`` (``rlpanel evaluate``'s tool) in a child process,
waited on from a pool thread (``app.threads.background``): the window never blocks, and Cancel (or
closing the dialog) kills the child instead of waiting for it. The result is kept in the run's
``evaluations.jsonl`` by the tool (the Results tab shows the newest) and shown here; a failure is
shown here in one line. A run still training can be evaluated: the tool only reads a complete checkpoint.
"""

from __future__ import annotations

import subprocess
from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.agent.checkpoint_picker import CheckpointPicker
from app.theme import error_color
from app.threads.background import run_in_background
from app.widgets.wrap_label import WrapLabel
from core.launch.agent_child import start_policy_tool, wait_policy_tool
from core.run.evaluations import Evaluation, tool_args

DEFAULT_SEED = -1  # the seed box's lowest value: the tool's default (the run's seed + 20,000)
MAX_EPISODES = 100_000


def result_html(ev: Evaluation) -> str:
    """The result as a small table: the mean and its spread first, then how it was measured, then the measures."""
    how = "deterministic" if ev.deterministic else "stochastic"
    interval = f"{ev.ci95[0]:,.2f} to {ev.ci95[1]:,.2f}" if ev.ci95 else "needs two episodes or more"
    asked = "" if ev.checkpoint.isdigit() or ev.checkpoint == "best" else f" ({ev.checkpoint})"
    rows = [("Mean reward", f"<b style='font-size:large'>{ev.mean_reward:,.2f}</b> ± {ev.std_reward:,.2f} (std)"),
            ("95% interval", f"{interval} (the mean's t-interval)"),
            ("Episodes", f"{ev.episodes}, {how} actions, seed {ev.seed}"),
            ("Mean length", f"{ev.mean_length:,.1f} steps"),
            ("Checkpoint", f"{escape(ev.label)}{escape(asked)}")]
    rows += [(escape(key), f"{value:,.4g} (mean)") for key, value in ev.measures.items()]
    cells = "".join(f"<tr><td style='padding-right:12px'>{name}</td><td>{value}</td></tr>" for name, value in rows)
    return f"<table>{cells}</table>"


class EvaluateDialog(QDialog):
    """Evaluate a checkpoint of ``run_dir``; ``evaluated(Evaluation)`` when a result is shown."""

    evaluated = Signal(object)

    def __init__(self, run_dir: Path, title: str | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.run_dir = Path(run_dir)
        self.setWindowTitle(f"Evaluate {title or self.run_dir.name}")
        self.proc: subprocess.Popen[bytes] | None = None
        self.evaluation: Evaluation | None = None
        self.error: str | None = None
        self._call = 0  # the answer of a cancelled call is ignored

        form = self._build_choices()
        self.evaluate_button = QPushButton("Evaluate")
        self.evaluate_button.setDefault(True)
        self.evaluate_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.setToolTip("Stop the evaluation (nothing is stored)")
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button = QPushButton("Close")
        self.close_button.clicked.connect(self.reject)
        self.status = WrapLabel("")
        self.output = QLabel("")
        self.output.setTextFormat(Qt.TextFormat.RichText)
        self.output.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.output.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QHBoxLayout()
        buttons.addWidget(self.evaluate_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.output, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        if self.checkpoint.count() == 0:
            self._show_error("This run keeps no complete checkpoint yet: evaluate it after its first checkpoint.")
            self.evaluate_button.setEnabled(False)
        app = QApplication.instance()
        if app is not None:  # the window closing ends a running evaluation instead of waiting it out
            app.aboutToQuit.connect(self.cancel)
        self.resize(560, 380)

    def _build_choices(self) -> QFormLayout:
        """Checkpoint, episodes, deterministic actions and seed, in a form."""
        self.checkpoint = CheckpointPicker(self.run_dir)
        self.checkpoint.setToolTip("Which checkpoint: the newest, the best periodic evaluation's (when kept), or a kept "
                                   "step. Each is played with the normalisation statistics saved with it.")
        self.episodes = QSpinBox()
        self.episodes.setRange(1, MAX_EPISODES)
        self.episodes.setValue(10)
        self.episodes.setToolTip("Episodes to play on a fresh env; the interval narrows with more")
        self.deterministic = QCheckBox("Deterministic actions")
        self.deterministic.setChecked(True)
        self.deterministic.setToolTip("On: the policy's most likely action. Off: actions sampled from the policy, "
                                      "as in training.")
        self.seed = QSpinBox()
        self.seed.setRange(DEFAULT_SEED, 2**31 - 1)
        self.seed.setValue(DEFAULT_SEED)
        self.seed.setSpecialValueText("the run's seed + 20,000")
        self.seed.setToolTip("The env's seed: the same seed plays the same episodes again")
        form = QFormLayout()
        form.addRow("Checkpoint", self.checkpoint)
        form.addRow("Episodes", self.episodes)
        form.addRow("", self.deterministic)
        form.addRow("Seed", self.seed)
        return form

    @property
    def running(self) -> bool:
        return self.proc is not None

    def start(self) -> None:
        """Start the evaluation the fields describe (off the GUI thread)."""
        if self.running or self.checkpoint.count() == 0:
            return
        seed = self.seed.value() if self.seed.value() != DEFAULT_SEED else None
        args = tool_args(str(self.checkpoint.currentData()), self.episodes.value(), self.deterministic.isChecked(), seed)
        self.evaluation, self.error = None, None
        self.output.setText("")
        try:
            proc = start_policy_tool("evaluate", self.run_dir, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            self._show_error(f"Could not start the evaluation: {exc}")
            return
        self.proc = proc
        self._call += 1
        call = self._call
        self._set_running(True)
        self.status.setStyleSheet("")
        self.status.setText(f"Playing {self.episodes.value()} episodes of {self.checkpoint.currentText()}…")
        run_in_background(lambda: wait_policy_tool("evaluate", proc),
                          lambda data: self._finished(call, data), lambda message: self._failed(call, message))

    def cancel(self) -> None:
        """End a running evaluation at once (its child is killed; nothing is stored)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        self._call += 1
        try:
            proc.kill()
        except OSError:  # it ended on its own in the meantime
            pass
        self._set_running(False)
        self.status.setStyleSheet("")
        self.status.setText("Cancelled.")

    def reject(self) -> None:  # Close, Escape and the title bar's close: never wait for a running evaluation
        self.cancel()
        super().reject()

    def _finished(self, call: int, data: Any) -> None:
        if call != self._call:
            return
        self.proc = None
        self._set_running(False)
        try:
            self.evaluation = Evaluation.from_json(data)
        except (ValueError, TypeError) as exc:
            self._show_error(f"The evaluation gave no readable result: {exc}")
            return
        self.status.setStyleSheet("")
        self.status.setText(f"Done in {self.evaluation.wall_s or 0:,.1f} s; kept in the run's evaluations.jsonl "
                            "(the Results tab shows the newest).")
        self.output.setText(result_html(self.evaluation))
        self.evaluated.emit(self.evaluation)

    def _failed(self, call: int, message: str) -> None:
        if call != self._call:
            return
        self.proc = None
        self._set_running(False)
        self._show_error(message.removeprefix("PolicyToolError: "))

    def _show_error(self, message: str) -> None:
        self.error = message
        self.status.setStyleSheet(f"color: {error_color(self).name()}")
        self.status.setText(message)

    def _set_running(self, running: bool) -> None:
        for widget in (self.checkpoint, self.episodes, self.deterministic, self.seed, self.evaluate_button):
            widget.setEnabled(not running)
        self.cancel_button.setEnabled(running)
