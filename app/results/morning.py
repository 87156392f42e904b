"""The morning report in the window: the night's runs, queue and failures (``core.results.report``).

A dialog from the Results tab: the time the night began (``18:00`` by default), the baselines the
user names (run ids, one per env; empty: each env's newest finished random or constant run), the
report drawn from its Markdown (words wrapped whole: a header never breaks mid-word), Save as md,
html or xlsx, and Close. The report is read off the GUI thread.

The runs' table has 14 columns. Left to Qt, every column shrinks to its longest word, and the Why
column, whose words are short, ends ~90 pixels wide: at 1280x720 a crash's message took 14 lines.
So the runs' cells other than Why stay on one line (a run id whole), the headers wrap at their
spaces, and Why takes what they leave, never under ``WHY_MIN_CHARS`` (``ReportView.fit_why``); a
table that is then wider than the view scrolls sideways. The dialog is never larger than the screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QResizeEvent, QTextBlockFormat, QTextCursor, QTextLength, QTextOption, QTextTable
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.settings import GRID_SETTING, get_setting
from app.threads.background import run_in_background
from app.widgets.screen_fit import fit_to_screen
from app.widgets.wrap_label import wrap_long_words
from core.queue.state import read_queue
from core.results.report import REWARD_LEGEND, MorningReport, morning_report, render, since_time
from core.run.store import RunStore
from core.sweep.control import sweeps_since
from core.util.files import write_bytes_atomic

FILTERS = {"Markdown (*.md)": "md", "HTML (*.html)": "html", "Excel (*.xlsx)": "xlsx"}
WHY_COLUMN = "Why"
WHY_MIN_CHARS = 40  # the Why column is never narrower than this many average characters
SIZE = (1500, 820)  # asked for: the runs' table whole on a desktop monitor; fit_to_screen cuts it to the screen


class ReportView(QTextBrowser):
    """The report's document; its runs' table gives the Why column the room the other columns leave."""

    def __init__(self) -> None:
        super().__init__()
        # QTextEdit's default wrap breaks a word anywhere once a column is narrower than it ("Algorith m"):
        # words whole, a table wider than the view scrolls
        self.setWordWrapMode(QTextOption.WrapMode.WordWrap)
        self._fitting = False

    def show_markdown(self, text: str) -> None:
        self.setMarkdown(text)
        table = self.runs_table()
        if table is not None:
            keep_on_one_line(table, self.why_column(table))
        self.fit_why()

    def runs_table(self) -> QTextTable | None:
        """The report's first table, the runs' (None: a night without runs)."""
        return next((f for f in self.document().rootFrame().childFrames() if isinstance(f, QTextTable)), None)

    @staticmethod
    def why_column(table: QTextTable) -> int | None:
        heads = [table.cellAt(0, c).firstCursorPosition().block().text().strip() for c in range(table.columns())]
        return heads.index(WHY_COLUMN) if WHY_COLUMN in heads else None

    def fit_why(self) -> None:
        """Give the Why column the view's width less the other columns' least (their one-line cells, their
        headers' longest words), at least ``WHY_MIN_CHARS``; again whenever the view's width changes."""
        table = self.runs_table()
        why = self.why_column(table) if table is not None else None
        if table is None or why is None or self._fitting:
            return
        self._fitting = True  # a width set here may add or take the scroll bar: the resize it causes is ours
        try:
            least = self.fontMetrics().averageCharWidth() * WHY_MIN_CHARS
            set_why_width(table, why, 1)
            fmt = table.format()
            fmt.setWidth(QTextLength(QTextLength.Type.FixedLength, 1))  # every column at its least
            table.setFormat(fmt)
            layout = self.document().documentLayout()
            others = layout.frameBoundingRect(table).width() - 1
            room = self.viewport().width() - 2 * self.document().documentMargin() - others
            fmt.setWidth(QTextLength())  # the table's own width again: the view's, or wider where it must be
            table.setFormat(fmt)
            set_why_width(table, why, max(least, int(room)))
        finally:
            self._fitting = False

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.fit_why()


def keep_on_one_line(table: QTextTable, why: int | None) -> None:
    """The runs' cells but Why on one line each: a column then is as wide as its widest cell (a run id whole)."""
    one_line = QTextBlockFormat()
    one_line.setNonBreakableLines(True)
    for row in range(1, table.rows()):
        for column in range(table.columns()):
            if column != why:
                cell = table.cellAt(row, column)
                cursor = cell.firstCursorPosition()
                cursor.setPosition(cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeBlockFormat(one_line)


def set_why_width(table: QTextTable, why: int, width: int) -> None:
    fmt = table.format()
    widths = [QTextLength()] * table.columns()  # variable: Qt's share
    widths[why] = QTextLength(QTextLength.Type.FixedLength, width)
    fmt.setColumnWidthConstraints(widths)
    table.setFormat(fmt)


class MorningReportDialog(QDialog):
    def __init__(self, runs_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Morning report")
        self.runs_dir = Path(runs_dir)
        self.report: MorningReport | None = None
        self._asked = 0  # reports asked for: only the newest one is shown
        self.since_edit = QLineEdit("18:00")
        self.since_edit.setToolTip("The night began at this time (the last one before now), or YYYY-MM-DD HH:MM")
        self.since_edit.returnPressed.connect(self.refresh)
        self.baselines_edit = QLineEdit()
        self.baselines_edit.setPlaceholderText("each env's newest random or constant run")
        self.baselines_edit.setToolTip("Run ids (a unique prefix will do), comma-separated, one per env: each env's "
                                       "runs are compared with the one of their env")
        self.baselines_edit.returnPressed.connect(self.refresh)
        self.show_button = QPushButton("Show")
        self.show_button.clicked.connect(self.refresh)
        self.save_button = QPushButton("Save…")
        self.save_button.clicked.connect(self.save)
        self.view = ReportView()
        self.view.setToolTip(REWARD_LEGEND)
        self.status = wrap_long_words(QLabel())  # "Wrote <path>": the dialog no wider than the screen
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Close)
        top = QHBoxLayout()
        top.addWidget(QLabel("Runs since"))
        top.addWidget(self.since_edit)
        top.addWidget(QLabel("Baselines"))
        top.addWidget(self.baselines_edit, 1)
        top.addWidget(self.show_button)
        top.addStretch(1)
        top.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(buttons)
        layout.addLayout(bottom)
        fit_to_screen(self, *SIZE)

    def refresh(self) -> None:
        try:
            since = since_time(self.since_edit.text())
        except ValueError as exc:
            self.status.setText(str(exc))
            return
        self.status.setText("Reading the runs…")
        grid = get_setting(GRID_SETTING, 0.0) or None
        root = self.runs_dir
        store = RunStore(root)
        try:
            named = [store.path(run.strip()) for run in self.baselines_edit.text().split(",") if run.strip()]
        except KeyError as exc:
            self.status.setText(f"Baselines: {exc.args[0]}")
            return
        self._asked += 1
        asked = self._asked  # a report asked for earlier that ends later is not shown over this one
        run_in_background(lambda: morning_report(store, since, named, grid_g_per_kwh=grid, queue=_queue_data(root),
                                                 sweeps=sweeps_since(root, since)),
                          lambda report: self._show(report, asked), lambda message: self._failed(message, asked))

    def _failed(self, message: str, asked: int) -> None:
        if asked == self._asked:
            self.status.setText(f"Could not make the report: {message}")

    def _show(self, report: MorningReport, asked: int) -> None:
        if asked != self._asked:
            return
        self.report = report
        text = render(report, "md")
        self.view.show_markdown(text if isinstance(text, str) else "")
        named = [f"{env}: {run or 'none'}" for env, run in report.baselines.items()]
        self.status.setText(f"{len(report.rows)} runs" + (f"; baselines {', '.join(named)}" if named else ""))

    def save(self) -> Path | None:
        if self.report is None:
            self.status.setText("Nothing to save yet: press Show.")
            return None
        path, chosen = QFileDialog.getSaveFileName(self, "Save the morning report", str(Path.home() / "morning-report.md"),
                                                   ";;".join(FILTERS))
        if not path:
            return None
        fmt = FILTERS.get(chosen) or {".html": "html", ".xlsx": "xlsx"}.get(Path(path).suffix.lower(), "md")
        out = Path(path) if Path(path).suffix else Path(path).with_suffix("." + fmt)
        return self.save_to(out, fmt)

    def save_to(self, path: Path, fmt: str) -> Path | None:
        assert self.report is not None
        content = render(self.report, fmt)
        try:
            write_bytes_atomic(path, content if isinstance(content, bytes) else content.encode("utf-8"))
        except OSError as exc:
            QMessageBox.warning(self, "Save failed", f"Could not write {path}:\n{exc}")
            return None
        self.status.setText(f"Wrote {path}")
        return path


def _queue_data(root: Path) -> dict[str, Any] | None:
    """The queue's state as the report takes it (plain data: core.results sits beside core.queue)."""
    queue = read_queue(root)
    return queue.to_json() if queue is not None else None
