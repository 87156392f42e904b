"""The Results table's columns as the window shows them: what a reader compares comes first, the rest after it.

The exports keep every column in their own order (``core.results.table.COLUMNS``, a ``GroupTable``'s reading
columns); the window puts the name, the figure with its interval and the change against the baseline first, so a
laptop's table (978 px at 1280x720 with Configure folded away) shows them without a sideways scroll: in the
export's order the final mean reward began at 1,336 px and the difference at 3,219 px. Any column but the name can
be hidden from the header's context menu; the choice is kept per kind of table (runs, groups of seeds). Long headers
are set on two lines (a header as wide as "Final mean reward (last 100 ep), mean ± se" made its column three times
as wide as its numbers).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from PySide6.QtCore import QAbstractProxyModel, QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHeaderView, QMenu, QTableView

from app.settings import get_setting, set_setting
from core.results.table import Column

# a run: its name, the figures and how they compare; then who it is (algorithm, env, state) and the rest
RUN_FIRST = ("name", "state", "final_mean_reward", "eval_mean_reward", "delta_reward", "delta_se", "delta_reward_pct")
# a group of seeds: the figure with its interval, the difference with its interval, whether it is significant
GROUP_FIRST = ("group", "mean_text", "ci_text", "delta", "delta_ci_text", "significant", "n")
NAME_KEYS = ("name", "group")  # the column that says which row is which: never hidden
HIDDEN_BY_DEFAULT = {"runs": ("run_id",), "groups": ()}  # the run's id: in the name's tooltip, and the name of a run without one
NAME_COLUMN_MAX_PX = 260  # a longer name elides (whole in its tooltip): the figures after it stay in view
TWO_LINES_FROM = 16  # header characters past which a header is broken onto two lines
SETTING = "results/hidden_columns/"


def window_order(columns: Iterable[Column], kind: str) -> list[Column]:
    """``columns`` with those a reader compares first, in ``RUN_FIRST`` or ``GROUP_FIRST`` order; the others after
    them in their own order."""
    first = RUN_FIRST if kind == "runs" else GROUP_FIRST
    rank = {key: i for i, key in enumerate(first)}
    return sorted(columns, key=lambda c: rank.get(c.key, len(first)))  # sorted() is stable: the rest keep their order


def two_lines(title: str) -> str:
    """A long header on two lines, broken where the longer line is shortest (before "(" or after "," if as good)."""
    if len(title) < TWO_LINES_FROM or " " not in title:
        return title
    best = None
    for i, ch in enumerate(title):
        if ch != " ":
            continue
        head, tail = title[:i].rstrip(), title[i + 1:].lstrip()
        natural = head.endswith(",") or tail.startswith("(")
        score = (max(len(head), len(tail)), not natural)
        if best is None or score < best[0]:
            best = (score, f"{head}\n{tail}")
    return best[1] if best else title


def hidden_keys(kind: str) -> set[str]:
    """The columns hidden in the window's table of ``kind`` (runs, groups): the user's choice, else the default."""
    raw = get_setting(SETTING + kind, "")
    try:
        keys = json.loads(raw) if raw else None
    except ValueError:
        keys = None
    return set(keys) if isinstance(keys, list) else set(HIDDEN_BY_DEFAULT[kind])


def set_hidden_keys(kind: str, keys: Iterable[str]) -> None:
    set_setting(SETTING + kind, json.dumps(sorted(keys)))


@runtime_checkable
class ColumnsModel(Protocol):
    """What the chooser reads of its table's model (``app.results.model.ResultsTableModel``, which imports this
    module: named by its shape, not imported)."""

    kind: str
    columns: list[Column]


class ColumnChooser:
    """The header's context menu of a table whose model has ``columns`` (``Column``s) and ``kind``: a tick per
    column; ``apply()`` hides what is not ticked (after each change of the model's columns)."""

    def __init__(self, table: QTableView):
        self.table = table
        header = table.horizontalHeader()
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._menu_at)
        self.menu: QMenu | None = None  # the open menu (tests pick its actions)

    def _model(self) -> ColumnsModel:
        model = self.table.model()
        source = model.sourceModel() if isinstance(model, QAbstractProxyModel) else model
        assert isinstance(source, ColumnsModel), f"{type(source).__name__} has no columns and kind"
        return source

    def apply(self) -> None:
        """Hide the columns not chosen, and keep the name column from taking the table's width."""
        model = self._model()
        hidden = hidden_keys(model.kind)
        for i, col in enumerate(model.columns):
            self.table.setColumnHidden(i, col.key in hidden and col.key not in NAME_KEYS)
        self.table.resizeColumnsToContents()
        for i, col in enumerate(model.columns):
            if col.key in NAME_KEYS and self.table.columnWidth(i) > NAME_COLUMN_MAX_PX:
                self.table.setColumnWidth(i, NAME_COLUMN_MAX_PX)

    def make_menu(self) -> QMenu:
        """The menu the header's right click opens (kept as ``menu``)."""
        model = self._model()
        menu = QMenu(self.table)
        hidden = hidden_keys(model.kind)
        for col in model.columns:
            if col.key in NAME_KEYS:
                continue
            action = QAction(col.title, menu)
            action.setCheckable(True)
            action.setChecked(col.key not in hidden)
            action.toggled.connect(lambda on, key=col.key: self.show_column(key, on))
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction("Every column").triggered.connect(lambda: self._set_hidden(set()))
        menu.addAction("The usual columns").triggered.connect(lambda: self._set_hidden(set(HIDDEN_BY_DEFAULT[model.kind])))
        self.menu = menu
        return menu

    def show_column(self, key: str, shown: bool) -> None:
        hidden = hidden_keys(self._model().kind)
        self._set_hidden(hidden - {key} if shown else hidden | {key})

    def _set_hidden(self, keys: set[str]) -> None:
        set_hidden_keys(self._model().kind, keys)
        self.apply()

    def _menu_at(self, pos: QPoint) -> None:
        header: QHeaderView = self.table.horizontalHeader()
        self.make_menu().popup(header.mapToGlobal(pos))
