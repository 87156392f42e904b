"""The Results table's model: ``core.results.table`` rows (or ``core.results.group_table`` rows of groups of seeds)
under the export's columns in the window's order (``app.results.columns``), sortable by value."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QFont

from app.results.columns import two_lines, window_order
from app.theme import state_color
from core.results.export import display
from core.results.group_table import GroupRow
from core.results.settings_diff import setting_text
from core.results.table import LEGEND, Column, ResultRow, columns_for

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
MARKED_COLOR = state_color("failed")


class ResultsTableModel(QAbstractTableModel):
    """Cells show what the Markdown export shows (rounded, signed deltas, † on unfinished runs);
    sorting uses the raw values, runs without a value last."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ResultRow] | list[GroupRow] = []
        self.kind = "runs"  # or "groups": which columns come first, and which the user hid (app.results.columns)
        self.columns: list[Column] = window_order(columns_for([]), self.kind)

    def set_rows(self, rows: list[ResultRow] | list[GroupRow], columns: list[Column] | None = None) -> None:
        """Rows of runs under the results table's columns, or rows of groups under the ``columns`` given."""
        self.beginResetModel()
        self.rows = rows[:]
        self.kind = "runs" if columns is None else "groups"
        every = columns if columns is not None else columns_for([r for r in rows if isinstance(r, ResultRow)])
        self.columns = window_order(every, self.kind)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        col = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return two_lines(col.title)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (LEGEND if col.key == "state" else col.title) + "\nRight-click a header to choose the columns"
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = self.rows[index.row()], self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            if col.key == "name" and isinstance(row, ResultRow) and not row.name:
                return row.run_id  # a run without a name goes by its id, as in every list (core.run.names)
            return display(col, row)
        if role == SORT_ROLE:
            value = row.sort_value(col.key) if isinstance(row, GroupRow) else row.value(col.key)
            if col.key == "name" and isinstance(row, ResultRow):
                value = (row.name or row.run_id).lower()  # as shown: a run without a name by its id
            if col.kind == "setting":  # numbers as numbers, lists and words as the config writes them
                return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else (
                    "" if value is None else setting_text(value))
            return value if value is not None else ("" if col.kind == "text" else float("-inf"))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            h = Qt.AlignmentFlag.AlignRight if col.kind not in ("text", "setting") else Qt.AlignmentFlag.AlignLeft
            return int(h | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and col.key == "state" and row.marked:
            return QBrush(MARKED_COLOR)
        if role == Qt.ItemDataRole.FontRole and row.is_baseline:
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(row, col)
        return None


def tooltip(row: ResultRow | GroupRow, col: Column) -> str:
    """A cell's tooltip: a group's seeds and test; a run's whole name and id, why it is marked, what a figure is."""
    if isinstance(row, GroupRow):
        test = f"\nagainst {row.baseline_group}: {row.vs.test}" if row.vs is not None else ""
        return f"{row.group}: {row.n} runs ({row.state}), seeds {row.value('seeds_text')}{test}\n" + "\n".join(row.runs)
    if col.key == "name":  # the whole name (a long one is elided) and the id the name stands for
        return "\n".join(dict.fromkeys([row.name or row.run_id, row.run_id, str(row.path)]))
    if row.marked:
        return f"{row.run_id}: {row.state}. {LEGEND}"
    if col.key == "final_mean_reward" and row.final_window:
        return f"the mean of the last {row.final_window} episodes" + (
            f" (std {row.final_std_reward:,.2f})" if row.final_std_reward is not None else "")
    if col.key.startswith("stored_eval") and row.stored_eval_note:
        return f"stored evaluation of {row.stored_eval_note}"
    if col.key.startswith("delta") and row.delta_basis and not row.is_baseline:
        return f"compares {row.delta_basis}" + (f"; ± {row.delta_se:,.2f} standard error" if row.delta_se else "")
    return str(row.path)


def sorting_proxy(model: ResultsTableModel, parent: QObject | None = None) -> QSortFilterProxyModel:
    proxy = QSortFilterProxyModel(parent)
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    return proxy
