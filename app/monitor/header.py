"""The Monitor's header: the followed run's title, how far it is (a bar: steps or a baseline's episodes done of
those planned, and the time left from its speed over the last minutes, or how much of a long history is read) and
Close run; and the alert line under it (readings past a threshold, a paused or stalled run's reason)."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.theme import ALERT_COLOR
from app.widgets.elided_label import ElidedLabel
from core.run.eta import SpeedEstimate, running_rate, time_left
from core.run.states import TERMINAL

ALERTS_TIP = "Past a threshold: within 5 °C of the GPU's slowdown temperature, memory >= 95 %, power >= 98 % of the limit"


class RunHeader(QWidget):
    """Title, progress bar and Close run on one line, as tall whether the bar and the button show or not."""

    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.speed = SpeedEstimate()  # the run's steps per second over the last minute (its progress records)
        self.title = ElidedLabel(title)
        self.title.setObjectName("monitorTitle")
        self.title.setStyleSheet("#monitorTitle { font-weight: 600; }")
        self.progress = QProgressBar()
        self.progress.setMinimumWidth(self.progress.fontMetrics().horizontalAdvance("88,888,888 / 88,888,888 steps · "
                                                                                   "8:88:88 left, done at 88:88") + 24)
        self.progress.setMaximumWidth(600)  # room for "… · 4:26 left, done at 03:12"
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.close_button = QPushButton("Close run")
        self.close_button.setToolTip("Stop showing this run (it keeps training): the GPU plots show the live GPUs again")
        self.close_button.hide()
        # the header keeps its height whether the bar and the close button show or not: the plots below never move
        self.title.setMinimumHeight(max(self.close_button.sizeHint().height(), self.progress.sizeHint().height()))
        top = QHBoxLayout(self)
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.progress)
        top.addWidget(self.close_button)

    def show_loading(self, share: float) -> None:
        """How much of a long history is read: in the bar, where it moves nothing."""
        self.progress.setRange(0, 1000)
        self.progress.setValue(int(1000 * min(1.0, max(0.0, share))))
        self.progress.setFormat(f"Loading the run's history… {100 * share:.0f} %")
        self.progress.setToolTip("")
        self.progress.show()

    def show_progress(self, last: dict[str, Any] | None, run_state: str | None) -> None:
        """Steps (or a baseline's episodes) done of those the run trains, and the time left."""
        if not last:
            self.progress.hide()
            return
        if last.get("episodes_total"):  # a baseline counts episodes, not steps
            done, total, unit = last.get("episodes") or 0, last["episodes_total"], "episodes"
        else:
            done, total, unit = last.get("step") or 0, last.get("total") or 0, "steps"
        if not total:
            return
        # the worker's total is the steps SB3 really runs (whole rollouts); an update that ends with episodes (ARS)
        # or a run recorded before that total passes it: the steps made are the total then, never "x / fewer"
        shown = max(done, total)
        self.progress.setRange(0, 1000)
        self.progress.setValue(int(1000 * done / shown))
        text = f"{done:,} / {shown:,} {unit}"
        tip = []
        if done > total:
            tip.append(f"{done:,} steps were taken, past the {total:,} planned: SB3 finishes the update that crosses "
                       "the budget")
        rate = running_rate(self.speed, run_state)
        if run_state == "running":
            eta = time_left(self.speed, total - done, run_state, time.time()) if unit == "steps" else None
            text += f" · {eta}" if eta else ""
        elif run_state in TERMINAL or run_state == "paused":
            text += f" · {run_state}"
        if rate:
            tip.append(f"{rate:,.0f} steps/s " + ("over the last minute" if self.speed.rate is not None else
                                                 f"over the {self.speed.span_s:.0f} s measured so far"))
        self.progress.setFormat(text)
        self.progress.setMinimumWidth(min(600, max(300, self.progress.fontMetrics().horizontalAdvance(text) + 30)))
        self.progress.setToolTip("\n".join(tip))
        self.progress.show()


def show_alerts(label: QLabel, alerts: list[str], run_state: str | None, pause_reason: str | None) -> None:
    """The alert line: a paused or stalled run's reason first, then the readings past a threshold; hidden when none."""
    if run_state == "paused":
        alerts.insert(0, f"Paused: {pause_reason or 'by the GPU guard'}")
    elif run_state == "stalled":
        alerts.insert(0, f"Stalled: {pause_reason or 'no step for longer than its stall limit'}")
    label.setText("   ·   ".join(alerts))
    label.setStyleSheet(f"QLabel {{ color: {ALERT_COLOR}; font-weight: 600; }}" if alerts else "")
    label.setToolTip(ALERTS_TIP if alerts else "")
    label.setVisible(bool(alerts))
