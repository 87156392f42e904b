"""The morning report in the window: the night's runs, queue and failures (``core.results.report``).

A dialog from the Results tab: the time the night began (``18:00`` by default), the baselines the
user names (run ids, one per env; empty: each env's newest finished random or constant run), the
report drawn from its Markdown (words wrapped whole: a header never breaks mid-word), and Save as md,
html or xlsx. The report is read off the GUI thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
)

from app.settings import GRID_SETTING, get_setting
from app.threads.background import run_in_background
from app.widgets.wrap_label import wrap_long_words
from core.queue.state import read_queue
from core.results.report import REWARD_LEGEND, MorningReport, morning_report, render, since_time
from core.run.store import RunStore
from core.sweep.control import sweeps_since
from core.util.files import write_bytes_atomic

FILTERS = {"Markdown (*.md)": "md", "HTML (*.html)": "html", "Excel (*.xlsx)": "xlsx"}


class MorningReportDialog(QDialog):
    def __init__(self, runs_dir: Path, parent=None):
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
        self.view = QTextBrowser()
        # QTextEdit's default wrap breaks a word anywhere once a column is narrower than it ("Algorith m"):
        # words whole, a table wider than the view scrolls
        self.view.setWordWrapMode(QTextOption.WrapMode.WordWrap)
        self.view.setToolTip(REWARD_LEGEND)
        self.status = wrap_long_words(QLabel())  # "Wrote <path>": the dialog no wider than the screen
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
        layout.addWidget(self.status)
        self.resize(1100, 700)

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
        self.view.setMarkdown(text if isinstance(text, str) else "")
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
