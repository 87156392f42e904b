"""A run's display name, tags and note, edited beside the runs list (``core.run.annotations``).

Edits are kept in the fields until saved: the list refreshing every few seconds never throws
away what the user is typing. A bad value is refused with the reason, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QWidget

from app.theme import error_color
from core.run.annotations import AnnotationError, Annotations, write_annotations
from core.run.store import RunInfo


def parse_tags(text: str) -> tuple[str, ...]:
    """``"night-3, sweep  lr"`` -> ``("night-3", "sweep", "lr")``: commas or spaces separate tags."""
    return tuple(t for t in text.replace(",", " ").split() if t)


class NotesBox(QGroupBox):
    """``saved(run_id)`` after the annotations of the shown run were written."""

    saved = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Name, tags and note", parent)
        self.run: RunInfo | None = None
        self.name = QLineEdit()
        self.name.setPlaceholderText("the name lists show (the folder keeps its id)")
        self.tags = QLineEdit()
        self.tags.setPlaceholderText("e.g. night-3 sweep (spaces or commas between tags)")
        self.note = QPlainTextEdit()
        self.note.setPlaceholderText("what this run tried, what you saw")
        self.note.setMaximumHeight(90)
        self.save_button = QPushButton("Save")
        self.save_button.clicked.connect(self.save)
        self.revert_button = QPushButton("Revert")
        self.revert_button.clicked.connect(lambda: self.show_run(self.run, force=True))
        self.message = QLabel()
        self.message.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("Name", self.name)
        form.addRow("Tags", self.tags)
        form.addRow("Note", self.note)
        buttons = QHBoxLayout()
        buttons.addWidget(self.message, 1)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)
        form.addRow(buttons)
        self.show_run(None)

    def edited(self) -> bool:
        """The fields differ from what the shown run has stored."""
        if self.run is None:
            return False
        return (self.name.text().strip() != (self.run.display_name or "") or parse_tags(self.tags.text()) != self.run.tags
                or self.note.toPlainText().strip() != self.run.note)

    def show_run(self, info: RunInfo | None, force: bool = False) -> None:
        """Show ``info``'s annotations (the same run again keeps unsaved edits unless ``force``)."""
        same = info is not None and self.run is not None and info.id == self.run.id
        keep_edits = same and self.edited() and not force
        self.run = info
        for widget in (self.name, self.tags, self.note, self.save_button, self.revert_button):
            widget.setEnabled(info is not None)
        if keep_edits:
            return
        self.name.setText((info.display_name or "") if info else "")
        self.tags.setText(" ".join(info.tags) if info else "")
        self.note.setPlainText(info.note if info else "")
        self.message.clear()

    def save(self) -> bool:
        if self.run is None:
            return False
        wanted = Annotations(self.name.text(), parse_tags(self.tags.text()), self.note.toPlainText())
        try:
            stored = write_annotations(Path(self.run.path), wanted)
        except (AnnotationError, OSError) as exc:
            self.message.setStyleSheet(f"color: {error_color(self).name()}")
            self.message.setText(f"Not saved: {exc}")
            return False
        self.run.display_name, self.run.tags, self.run.note = stored.display_name, stored.tags, stored.note
        self.show_run(self.run, force=True)
        self.message.setStyleSheet("")
        self.message.setText("Saved")
        self.saved.emit(self.run.id)
        return True
