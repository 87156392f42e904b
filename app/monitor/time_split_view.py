"""Where the followed run's time goes: a thin stacked bar (collecting, training, the rest), its shares in words for
the recent cycles and the whole run, and one sentence of advice (``core.run.time_split``), all on one line: the
advice as much as fits, whole in its tooltip. (Wrapped under the bar, the advice took three lines of a laptop's
Monitor, 58 px that the scalar charts lost: issue 42.)

Fed by the metrics batches' summed ``cycle`` records (``MetricsBatch.time_split``) and their newest
records (``recent_cycles``); hidden until a run has a cycle record.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QWidget

from app.theme import TIME_SPLIT_COLORS
from app.widgets.elided_label import ElidedLabel
from core.run.cache.columns import RECENT_CYCLES, MetricsBatch
from core.run.time_split import TimeSplit, advice, split_line

RECENT_S = 30.0  # the "recent" split: the cycle records of the last half minute of the run
BAR_HEIGHT = 8
BAR_WIDTH = 120  # the bar's room on the line: the shares' words beside it say the figures


class AdviceLabel(ElidedLabel):
    """The advice: what the line has left after the bar and the words (its size hint asks for no more)."""

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return self.minimumSizeHint()


class SplitBar(QWidget):
    """Three segments side by side, as wide as the shares (collecting, training, other)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.shares: tuple[float, float, float] | None = None
        self.setFixedHeight(BAR_HEIGHT)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(BAR_WIDTH, BAR_HEIGHT)

    def set_shares(self, shares: tuple[float, float, float] | None) -> None:
        self.shares = shares
        self.update()

    def paintEvent(self, event: Any) -> None:
        painter = QPainter(self)
        painter.setPen(Qt.PenStyle.NoPen)
        width, height = float(self.width()), float(self.height())
        painter.fillRect(QRectF(0, 0, width, height), QColor(128, 128, 128, 40))
        x = 0.0
        for share, color in zip(self.shares or (), TIME_SPLIT_COLORS, strict=False):
            w = width * share
            painter.fillRect(QRectF(x, 0, w, height), QColor(color))
            x += w
        painter.end()


class TimeSplitView(QWidget):
    """The split of the recent cycles (bar and words), the whole run's, and the advice."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.whole = TimeSplit()
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT_CYCLES)
        self.device = "cpu"
        self.algo = ""
        self.bar = SplitBar()
        self.bar.setToolTip("Blue: collecting (env steps and the policy's inference); amber: training (gradient steps); "
                            "grey: the rest (checkpoints, evaluations, logging). SB3 does one, then the other.")
        self.words = ElidedLabel(mode=Qt.TextElideMode.ElideRight)
        self.words.setObjectName("timeSplitWords")
        self.advice = AdviceLabel(mode=Qt.TextElideMode.ElideRight)
        self.advice.setObjectName("timeSplitAdvice")
        self.advice.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.words)
        layout.addWidget(self.advice, 1)
        self.hide()

    def reset(self) -> None:
        self.whole = TimeSplit()
        self.recent.clear()
        self._show()

    def set_context(self, device: str | None, algo: str | None) -> None:
        """The run's device ("cuda:0", "cpu") and algorithm: what the advice depends on."""
        device, algo = device or "cpu", algo or ""
        if (device, algo) != (self.device, self.algo):
            self.device, self.algo = device, algo
            self._show()

    def add_batch(self, batch: MetricsBatch) -> None:
        if batch.reset:
            self.whole = TimeSplit()
            self.recent.clear()
        if batch.time_split is None:
            if batch.reset:
                self._show()
            return
        self.whole.add(batch.time_split)
        self.recent.extend(batch.recent_cycles)
        self._show()

    def recent_split(self) -> TimeSplit | None:
        """The cycle records of the last ``RECENT_S`` of the run (by their times)."""
        if not self.recent:
            return None
        newest = float(self.recent[-1].get("t") or 0.0)
        split = TimeSplit()
        for rec in self.recent:
            if float(rec.get("t") or 0.0) >= newest - RECENT_S:
                split.add_record(rec)
        return split

    def _words(self, recent: TimeSplit | None, whole_line: str) -> str:
        """The recent shares, then the whole run's (in short where they differ; once where they are the same)."""
        recent_shares = recent.shares() if recent is not None else None
        whole_shares = self.whole.shares()
        if recent is None or recent_shares is None or whole_shares is None:
            return f"Whole run: {whole_line}"
        if [round(100 * s) for s in recent_shares] == [round(100 * s) for s in whole_shares]:
            return f"{whole_line} (the whole run)"
        short = " / ".join(f"{100 * s:.0f}" for s in whole_shares)
        return f"Last {RECENT_S:.0f} s: {split_line(recent)}; whole run {short} %"

    def _show(self) -> None:
        recent = self.recent_split()
        whole_line = split_line(self.whole)
        if not whole_line:
            self.hide()
            return
        shown = recent if recent is not None and recent.shares() else self.whole
        self.bar.set_shares(shown.shares())
        self.words.setText(self._words(recent, whole_line))
        self.words.setToolTip(f"{self.whole.n:,} update cycles in all; the recent ones: the last {RECENT_S:.0f} s")
        self.advice.setText(advice(shown, self.device, self.algo))  # what the run waits on now
        self.show()
