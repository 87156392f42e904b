"""The Log tab: the followed run's ``worker.log`` and its ``event`` records, tail-following.

Each message once: the worker prints its events to worker.log as well (``core.run.records.event_echo``),
so those lines are dropped here and the event record, with its time, is shown. The window's own lines (a
notification where there is no tray, a run's failure) start with their local time too, as the events do.
Long lines wrap at the pane's width: following the newest line never scrolls the pane sideways to a line's
far end.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPlainTextEdit, QVBoxLayout, QWidget

from app.widgets.elided_label import ElidedLabel
from core.run.records import is_event_echo

MAX_LINES = 20000
MAX_NOTICES = 50


def clock_stamp(t: float | None) -> str:
    """``[HH:MM:SS]``, the local time of ``t`` (seconds since the epoch) that starts a line of the Log tab."""
    return f"[{datetime.fromtimestamp(t).strftime('%H:%M:%S')}]" if t else "[--:--:--]"


def format_event(rec: dict[str, Any]) -> str:
    return f"{clock_stamp(rec.get('t'))} event {str(rec.get('level', 'info')).upper()}: {rec.get('message', '')}"


class LogPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = ElidedLabel("No run selected")  # "<run id>: worker.log and events": 411 px for a short name
        self.follow_box = QCheckBox("Follow")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Keep the newest line in view")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(MAX_LINES)  # old lines drop off: a long run cannot eat memory
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.follow_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.text, 1)

        self.notices: list[str] = []  # the window's own lines (notifications with no tray): kept over a change of run

    def set_run(self, title: str) -> None:
        self.title.setText(title)
        self.text.clear()
        self.append_lines(self.notices)

    def add_notice(self, line: str) -> None:
        """A line of the window's own (a desktop notification where there is no tray), with the time it came, that
        stays when another run is followed; the newest ``MAX_NOTICES`` are kept."""
        line = f"{clock_stamp(time.time())} {line}"
        self.notices = [*self.notices, line][-MAX_NOTICES:]
        self.append_lines([line])

    def add_line(self, line: str, t: float | None = None) -> None:
        """A line of the window's own about the followed run (gone with it), with its time (``t``, else now)."""
        self.append_lines([f"{clock_stamp(t or time.time())} {line}"])

    def append_lines(self, lines: list[str]) -> None:
        if not lines:
            return
        self.text.appendPlainText("\n".join(lines))
        if self.follow_box.isChecked():
            # the start of the last line, not its end: the view follows down, never to the right
            self.text.moveCursor(QTextCursor.MoveOperation.End)
            self.text.moveCursor(QTextCursor.MoveOperation.StartOfBlock)
            self.text.verticalScrollBar().setValue(self.text.verticalScrollBar().maximum())
        self.text.horizontalScrollBar().setValue(0)

    def add_log_lines(self, lines: list[str]) -> None:
        """Show worker.log's new lines, but for the echoes of event records (``add_events`` shows those)."""
        self.append_lines([line for line in lines if not is_event_echo(line)])

    def add_events(self, events: list[dict[str, Any]]) -> None:
        """Show the ``event`` records of a metrics batch."""
        self.append_lines([format_event(r) for r in events if r.get("kind") == "event"])

    def plain_text(self) -> str:
        return self.text.toPlainText()

    def on_shown(self) -> None:
        """Nothing to do: the lines come as they are written."""

    def on_closing(self) -> None:
        """Nothing of its own to stop."""
