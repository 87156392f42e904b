"""A preset side by side with its base: one row per setting it changes."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.widgets.wrap_label import wrap_long_words
from core.config.errors import ConfigError
from core.config.field_index import format_value
from core.config.presets import diff_against_base, get_preset


class PresetDiffDialog(QDialog):
    """Setting | base value | preset value, from ``core.config.presets.diff_against_base``."""

    def __init__(self, name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"Preset {name} against its base")
        self.table = QTableWidget(0, 3)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.caption = wrap_long_words(QLabel())  # the user's preset names: one word each to Qt's wrap
        try:
            preset = get_preset(name)
            base = preset.base or "schema defaults"
            rows = diff_against_base(name)
        except ConfigError as exc:
            base, rows = "?", []
            self.caption.setText(f"Cannot compare: {exc}")
        else:
            self.caption.setText(f"<b>{name}</b> changes {len(rows)} setting(s) of <b>{base}</b>." if rows
                                 else f"<b>{name}</b> has the same values as <b>{base}</b>.")
        self.table.setHorizontalHeaderLabels(["Setting", base, name])
        self.set_rows(rows)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.caption)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(620, 360)

    def set_rows(self, rows: list[tuple[str, Any, Any]]) -> None:
        self.table.setRowCount(len(rows))
        for r, (path, base_value, value) in enumerate(rows):
            for c, text in enumerate((path, _show(base_value), _show(value))):
                self.table.setItem(r, c, QTableWidgetItem(text))

    def rows(self) -> list[tuple[str, str, str]]:
        out = []
        for r in range(self.table.rowCount()):
            path, base, value = (cell.text() if (cell := self.table.item(r, c)) is not None else "" for c in range(3))
            out.append((path, base, value))
        return out


def _show(value: Any) -> str:
    return "(default: empty)" if value is None else format_value(value)
