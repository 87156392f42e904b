"""Advice with a one-click fix: what SB3 accepts with a warning (a PPO minibatch that does not
divide the rollout), the field it concerns and a button that sets the suggested value."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.config.errors import FieldHint


class HintsBox(QWidget):
    """One line per hint: its message and a "Use VALUE" button; emits ``fix_clicked(FieldHint)``."""

    fix_clicked = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.buttons: list[QPushButton] = []
        self._shown: list[FieldHint] = []
        self.hide()

    def show_hints(self, hints: list[FieldHint], label_for: dict[str, str]) -> None:
        """Show ``hints``; ``label_for`` maps a field path to its form label."""
        if hints == self._shown:
            return
        self._shown = list(hints)
        while self._layout.count():
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.buttons = []
        for hint in hints:
            row = QWidget()
            line = QHBoxLayout(row)
            line.setContentsMargins(0, 0, 0, 0)
            where = label_for.get(hint.path, hint.path)
            text = QLabel(f"Note: {where} ({hint.path}): {hint.message}")
            text.setWordWrap(True)
            button = QPushButton(f"Use {hint.value}")
            button.setToolTip(f"Set {hint.path} to {hint.value}")
            button.clicked.connect(lambda _checked=False, h=hint: self.fix_clicked.emit(h))
            line.addWidget(text, 1)
            line.addWidget(button, 0)
            self.buttons.append(button)
            self._layout.addWidget(row)
        self.setVisible(bool(hints))
