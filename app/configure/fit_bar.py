"""The fit bar: the estimate's breakdown as stacked bars against GPU and host memory.

``MemoryBar`` paints one stacked bar (QPainter) with a tooltip per segment; ``FitBox`` shows the
GPU bar, the host bar, the verdict, the biggest term and the suggested fix as a button. The
estimate itself comes from ``core.estimate.estimate`` (see ``estimator.py``); nothing here computes it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QToolTip, QWidget

from app.theme import error_color, segment_color, verdict_color
from app.widgets.name_combo import NameCombo
from app.widgets.wrap_label import WrapLabel
from core.estimate.result import NO_FIT, TIGHT, FitEstimate, Suggestion
from core.util import text

GIB = 1024**3


def format_bytes(n: float | None) -> str:
    """Sizes in the fit bar: two decimals of GiB (7.60 of 8.00 GiB decides a fit), ``?`` when unknown."""
    return text.format_bytes(n, missing="?", gib_digits=2)


def term_label(name: str) -> str:
    return name.replace("_", " ")


def suggestion_short(suggestion: Suggestion) -> str:
    """``batch_size 65536 -> 32768``: the field and its change, for a button."""
    def show(v: Any) -> str:
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    return f"{suggestion.path.rsplit('.', 1)[-1]} {show(suggestion.old)} \u2192 {show(suggestion.new)}"


def no_fit_reason(estimate: FitEstimate) -> str:
    """Why a run will not fit, in words for the launch confirmation."""
    lines = []
    host = estimate.host_side
    if estimate.verdict == NO_FIT and estimate.on_gpu:
        lines.append(f"The estimate needs {format_bytes(estimate.gpu_bytes)} of GPU memory; "
                     f"{estimate.gpu_name or 'the target'} has {format_bytes(estimate.capacity_bytes)}.")
    if estimate.host_side.over_capacity_text:  # this Windows machine's card: it will not fail, it will crawl
        lines.append(f"{crawl_sentence(estimate.host_side)}.")
    if host.host_verdict == NO_FIT or (estimate.verdict == NO_FIT and not estimate.on_gpu):
        lines.append(f"It needs {format_bytes(host.host_bytes)} of host memory; this machine has "
                     f"{format_bytes(host.host_capacity_bytes)}.")
    big = estimate.biggest()
    lines.append(f"The biggest term is {term_label(big.name)} ({format_bytes(big.bytes)}).")
    if estimate.suggestion:
        lines.append(f"Suggested fix: {estimate.suggestion.text}.")
    return "\n".join(lines)


def crawl_sentence(estimate: FitEstimate) -> str:
    """The over-capacity sentence of a Windows card, capitalised to start a line ("" when it does not apply)."""
    sentence = estimate.over_capacity_text
    return sentence[:1].upper() + sentence[1:]


def plan_text(estimate: FitEstimate) -> str:
    """This machine and the target side by side, when the target is another machine's card: the GPU bar is the
    target's, the Host bar this machine's (``FitEstimate.host_side``), and each figure here is one of a bar's."""
    here = estimate.this_machine
    if here is None:
        return ""
    mine = f"{format_bytes(here.gpu_bytes)} of {format_bytes(here.capacity_bytes)}, {here.verdict}; " if here.on_gpu else ""
    mine += f"host RAM {format_bytes(here.host_bytes)}, {here.host_verdict}: the Host bar"
    here_line = f"This machine: trains on {estimate.train_device_reason or estimate.train_device} ({mine})."
    if not estimate.on_gpu:  # a plan without a GPU: the GPU bar is empty
        return here_line
    target = f"{format_bytes(estimate.gpu_bytes)} of {format_bytes(estimate.capacity_bytes)}"
    return f"{here_line}\n{estimate.gpu_name or 'The target'}, the target (the GPU bar): {estimate.verdict} {target}."


def source_text(estimate: FitEstimate) -> str:
    """Where the card's fixed costs come from and how its last runs compared; the way to measure them."""
    if not estimate.gpu_source:
        return ""
    text = f"GPU costs {estimate.gpu_source}" if estimate.gpu_source.startswith("measured") else \
        f"GPU costs from {estimate.gpu_source} (estimated)"
    if estimate.gpu_history:
        text += f"; {estimate.gpu_history}"
    if not estimate.gpu_source.startswith("measured") and estimate.this_machine is None:
        text += "; Calibrate in the System tab measures this card"
    return text


class MemoryBar(QWidget):
    """Stacked segments (name, bytes) against a capacity, with the 80 % / 95 % verdict marks."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.segments: list[tuple[str, int]] = []
        self.capacity: int | None = None
        self.color: QColor | None = None  # outline colour: the verdict's
        self.setMinimumHeight(18)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(240, 20)

    def set_data(self, segments: list[tuple[str, int]], capacity: int | None, color: QColor | None = None) -> None:
        self.segments = [(n, int(b)) for n, b in segments if b > 0]
        self.capacity = capacity
        self.color = color
        self.update()

    def total(self) -> int:
        return sum(b for _, b in self.segments)

    def _scale(self) -> float:
        # Past capacity the bar is scaled to the total, so the overflow shows beyond the capacity mark.
        return float(max(self.capacity or 0, self.total(), 1))

    def _rects(self) -> list[tuple[QRectF, int]]:
        inner = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        scale = self._scale()
        x = inner.left()
        out = []
        for index, (_, size) in enumerate(self.segments):
            width = inner.width() * size / scale
            out.append((QRectF(x, inner.top(), width, inner.height()), index))
            x += width
        return out

    def paintEvent(self, _event: Any) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        pal = self.palette()
        frame = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.fillRect(frame, pal.color(QPalette.ColorRole.Base))
        for rect, index in self._rects():
            painter.fillRect(rect, segment_color(index))
        inner = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        if self.capacity:
            scale = self._scale()
            mark_pen = QPen(pal.color(QPalette.ColorRole.WindowText))
            mark_pen.setStyle(Qt.PenStyle.DotLine)
            for share in (0.8, 0.95):
                x = inner.left() + inner.width() * self.capacity * share / scale
                painter.setPen(mark_pen)
                painter.drawLine(int(x), int(inner.top()), int(x), int(inner.bottom()))
            x = inner.left() + inner.width() * self.capacity / scale
            painter.setPen(QPen(pal.color(QPalette.ColorRole.WindowText), 2))
            painter.drawLine(int(x), int(inner.top()) - 1, int(x), int(inner.bottom()) + 1)
        painter.setPen(QPen(self.color or pal.color(QPalette.ColorRole.Mid), 1))
        painter.drawRect(frame)
        painter.end()

    def segment_at(self, x: float) -> int | None:
        for rect, index in self._rects():
            if rect.left() <= x < rect.right():
                return index
        return None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            index = self.segment_at(event.pos().x())
            if index is None:
                QToolTip.showText(event.globalPos(), self.summary(), self)
            else:
                name, size = self.segments[index]
                share = f" ({size / self.capacity:.0%} of capacity)" if self.capacity else ""
                QToolTip.showText(event.globalPos(), f"{term_label(name)}: {format_bytes(size)}{share}", self)
            return True
        return super().event(event)

    def summary(self) -> str:
        cap = f" of {format_bytes(self.capacity)}" if self.capacity else ""
        lines = [f"{format_bytes(self.total())}{cap}"]
        lines += [f"{term_label(n)}: {format_bytes(b)}" for n, b in self.segments]
        return "\n".join(lines)


class FitBox(QGroupBox):
    """Target GPU choice, GPU and host bars, verdict and the suggested fix.

    ``target_changed(str)`` when the user picks a target; ``suggestion_clicked(dict)`` carries the
    estimate's ``suggestion`` (``path``, ``old``, ``new``, ``text``) for the panel to apply.
    """

    target_changed = Signal(str)
    suggestion_clicked = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Fit before launch", parent)
        self.estimate: FitEstimate | None = None
        self.targets_complete = True  # the target list holds the profiles (set_targets)
        self.target_combo = NameCombo(15)  # this machine's GPU names (NVML) and the profiles': the launch column keeps its width
        self.target_combo.setToolTip("The GPU to plan for: the detected one (auto) or a profile from configs/gpus.yaml")
        self.target_combo.activated.connect(lambda _i: self.target_changed.emit(self.target()))
        self.gpu_bar = MemoryBar()
        self.host_bar = MemoryBar()
        self.gpu_text = QLabel()
        self.host_text = QLabel()
        for label in (self.gpu_text, self.host_text):
            label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            label.setMinimumWidth(label.fontMetrics().horizontalAdvance("00.00 GiB / 00.00 GiB"))
        self.verdict_label = QLabel()
        font = self.verdict_label.font()
        font.setBold(True)
        self.verdict_label.setFont(font)
        self.detail_label = WrapLabel()
        self.warning_label = WrapLabel()  # the device warning: a GPU here that this torch cannot use
        self.warning_label.hide()
        self.plan_label = WrapLabel()  # a target that is not this machine: both, side by side
        self.plan_label.hide()
        self.source_label = WrapLabel()  # where the card's fixed costs come from, how its last runs compared
        self.source_label.hide()
        self.suggestion_button = QPushButton()
        self.suggestion_button.hide()
        self.suggestion_button.clicked.connect(self._suggestion)

        grid = QGridLayout(self)
        grid.setColumnStretch(1, 1)
        grid.addWidget(QLabel("Target"), 0, 0)
        grid.addWidget(self.target_combo, 0, 1, 1, 2)
        grid.addWidget(QLabel("GPU"), 1, 0)
        grid.addWidget(self.gpu_bar, 1, 1)
        grid.addWidget(self.gpu_text, 1, 2)
        grid.addWidget(QLabel("Host"), 2, 0)
        grid.addWidget(self.host_bar, 2, 1)
        grid.addWidget(self.host_text, 2, 2)
        verdict = QHBoxLayout()
        verdict.addWidget(self.verdict_label)
        verdict.addWidget(self.detail_label, 1)
        grid.addLayout(verdict, 3, 0, 1, 3)
        grid.addWidget(self.plan_label, 4, 0, 1, 3)
        grid.addWidget(self.source_label, 5, 0, 1, 3)
        grid.addWidget(self.warning_label, 6, 0, 1, 3)
        grid.addWidget(self.suggestion_button, 7, 0, 1, 3)
        self.show_unavailable("no estimate yet")

    # --- target ----------------------------------------------------------------------------

    def set_targets(self, choices: list[tuple[str, str]], current: str, complete: bool = True) -> None:
        """``choices`` are (value, label); ``current`` is selected (added if unknown). ``complete=False``: the list
        waits for the profiles (the window's first frame), so a target not in it is shown by its name alone."""
        self.targets_complete = complete
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        for value, label in choices:
            self.target_combo.addItem(label, value)
        self.target_combo.blockSignals(False)
        self.select_target(current)

    def select_target(self, value: str) -> None:
        index = self.target_combo.findData(value)
        if index < 0:
            self.target_combo.addItem(f"{value} (unknown profile)" if self.targets_complete else value, value)
            index = self.target_combo.count() - 1
        self.target_combo.setCurrentIndex(index)

    def target(self) -> str:
        return str(self.target_combo.currentData() or "auto")

    # --- estimate --------------------------------------------------------------------------

    def show_estimate(self, estimate: FitEstimate, host_total: int | None) -> None:
        self.estimate = estimate
        verdict = estimate.verdict
        gpu_terms = [(t.name, t.bytes) for t in estimate.terms if t.where == "gpu"]
        host = estimate.host_side  # this machine's host RAM, where the run is launched: one figure in bar and text
        host_terms = [(t.name, t.bytes) for t in host.terms if t.where == "host"]
        if estimate.on_gpu:
            capacity = estimate.capacity_bytes
            self.gpu_bar.set_data(gpu_terms, capacity, verdict_color(self, verdict))
            self.gpu_text.setText(f"{format_bytes(estimate.gpu_bytes)} / {format_bytes(capacity)}")
        else:
            self.gpu_bar.set_data([], None)
            self.gpu_text.setText("not used (CPU)")
        warnings = list(estimate.warnings)
        if estimate.this_machine is not None:  # the plan's first warning is what plan_label shows
            warnings = warnings[1:]
        if estimate.host_side.over_capacity_text:  # "does not fit" on Windows: a crawl all night, not an error
            warnings.insert(0, f"Does not fit on this card: {estimate.host_side.over_capacity_text}.")
        self.plan_label.setText(plan_text(estimate))
        self.plan_label.setVisible(estimate.this_machine is not None)
        self.source_label.setText(source_text(estimate))
        self.source_label.setVisible(bool(estimate.gpu_source))
        self.warning_label.setText("\n".join(warnings))
        self.warning_label.setStyleSheet(f"color: {error_color(self).name()};")
        self.warning_label.setVisible(bool(warnings))
        host_capacity = host.host_capacity_bytes or host_total
        self.host_bar.set_data(host_terms, host_capacity, verdict_color(self, host.host_verdict))
        self.host_text.setText(f"{format_bytes(host.host_bytes)} / {format_bytes(host_capacity)}")
        shown = verdict
        if host.host_verdict == NO_FIT and verdict != NO_FIT:
            shown = NO_FIT  # host RAM is what runs out
        self.verdict_label.setText(shown)
        self.verdict_label.setStyleSheet(f"color: {verdict_color(self, shown).name()};")
        self.detail_label.setText(self._detail(estimate))
        suggestion = estimate.suggestion
        self.suggestion_button.setVisible(suggestion is not None)
        if suggestion is not None:
            self.suggestion_button.setText(f"Apply fix: {suggestion_short(suggestion)}")
            self.suggestion_button.setToolTip(suggestion.text)

    @staticmethod
    def _detail(estimate: FitEstimate) -> str:
        big = estimate.biggest() if estimate.main_side == "gpu" else estimate.host_side.biggest("host")
        parts = [f"trains on {estimate.train_device}"] if estimate.train_device else []
        if estimate.network_source:  # the user's own network: built and counted, not a formula
            parts.append(f"{estimate.parameter_count:,} parameters, {estimate.network_source}")
        parts.append(f"biggest: {term_label(big.name)} {format_bytes(big.bytes)} ({big.where})")
        if estimate.host_side.host_verdict in (TIGHT, NO_FIT):
            parts.append(f"host RAM: {estimate.host_side.host_verdict}")
        return "; ".join(parts + estimate.notes)

    def show_unavailable(self, why: str) -> None:
        """No estimate (config invalid, env being probed, estimate module missing): say why."""
        self.estimate = None
        self.gpu_bar.set_data([], None)
        self.host_bar.set_data([], None)
        self.gpu_text.setText("")
        self.host_text.setText("")
        self.verdict_label.setText("")
        self.detail_label.setText(why)
        self.detail_label.setStyleSheet("")
        self.warning_label.hide()
        self.plan_label.hide()
        self.source_label.hide()
        self.suggestion_button.hide()

    def verdict(self) -> str | None:
        return self.estimate.verdict if self.estimate else None

    def _suggestion(self) -> None:
        if self.estimate is not None and self.estimate.suggestion is not None:
            self.suggestion_clicked.emit(self.estimate.suggestion)
