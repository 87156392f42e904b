"""The schedule editor: a constant, or a linear schedule from a start value to an end value.

What ``core.config.fields.Schedule`` holds (``learning_rate``, ``clip_range``): the form shows a
kind (constant / linear) and one or two numbers; rl_zoo3's ``lin_X`` typed as text works too.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from app.configure.fields import parse_text
from core.config.field_index import FieldKind, format_value

NUMBER = FieldKind("number")
KINDS = ("constant", "linear")


class ScheduleEditor(QWidget):
    """Emits ``edited(value)``: a number, ``{schedule: linear, start, end}``, or the text typed if it is neither."""

    edited = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.kind = QComboBox()
        self.kind.addItems(list(KINDS))
        self.kind.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # "constant" readable in full
        self.kind.setToolTip("constant: one value for the whole run; linear: from start to end over the run")
        self.start = QLineEdit()
        self.start.setPlaceholderText("value")
        self.arrow = QLabel("\u2192")
        self.end = QLineEdit()
        self.end.setPlaceholderText("end")
        for edit in (self.start, self.end):
            edit.setMinimumWidth(edit.fontMetrics().horizontalAdvance("0" * 6))
            edit.textEdited.connect(lambda _t: self._emit())
        self.kind.activated.connect(lambda _i: self._kind_changed())
        line = QHBoxLayout(self)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.kind, 0)
        line.addWidget(self.start, 1)
        line.addWidget(self.arrow, 0)
        line.addWidget(self.end, 1)
        self._show_kind()

    def lineEdit(self) -> QLineEdit:  # noqa: N802 - the name QComboBox uses, so forms and tests treat both alike
        """The line a constant (or the start value) is typed into."""
        return self.start

    def _kind_changed(self) -> None:
        if self.kind.currentText() == "linear" and not self.end.text().strip():
            self.end.setText("0.0")
        self._show_kind()
        self._emit()

    def _show_kind(self) -> None:
        linear = self.kind.currentText() == "linear"
        self.arrow.setVisible(linear)
        self.end.setVisible(linear)
        self.start.setPlaceholderText("start" if linear else "value")

    def value(self) -> Any:
        start = parse_text(self.start.text(), NUMBER)
        if self.kind.currentText() == "constant":
            return start
        return {"schedule": "linear", "start": start, "end": parse_text(self.end.text() or "0", NUMBER)}

    def _emit(self) -> None:
        self.edited.emit(self.value())

    def text(self) -> str:
        value = self.value()
        if isinstance(value, dict):
            return f"linear {self.start.text()} -> {self.end.text()}"
        return self.start.text()

    def set_text(self, text: str) -> None:
        """Type ``text`` as a user would: a number, or rl_zoo3's ``lin_X`` (linear from X to 0)."""
        stripped = text.strip()
        if stripped.startswith("lin_"):
            self.show_value({"schedule": "linear", "start": parse_text(stripped[4:], NUMBER), "end": 0.0})
        else:
            self.show_value(parse_text(stripped, NUMBER))
        self._emit()

    def show_value(self, value: Any) -> None:
        """Show ``value`` without emitting ``edited``."""
        for widget in (self.kind, self.start, self.end):
            widget.blockSignals(True)
        try:
            if isinstance(value, str) and value.strip().startswith("lin_"):  # rl_zoo3's spelling, as presets keep it
                value = {"schedule": "linear", "start": parse_text(value.strip()[4:], NUMBER), "end": 0.0}
            if isinstance(value, dict):
                self.kind.setCurrentText("linear")
                self.start.setText(format_value(value.get("start")))
                self.end.setText(format_value(value.get("end", 0.0)))
            else:
                self.kind.setCurrentText("constant")
                self.start.setText(format_value(value))
            self._show_kind()
        finally:
            for widget in (self.kind, self.start, self.end):
                widget.blockSignals(False)
