"""Configure's Launch row: the Seeds field beside Launch (one launch a group of seeds: N runs of the config at once,
``core.launch.start.start_group``, as ``rlpanel train --seeds``), the line under it when the field cannot be read, and
``LaunchRequest``, what Launch hands the window."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from app.theme import error_color
from app.widgets.wrap_label import WrapLabel
from core.config.errors import ConfigError
from core.config.seeds import parse_seeds, seeds_text

if TYPE_CHECKING:
    from core.config.schema import RunConfig  # pydantic: the first validation, after the window's first frame
    from core.estimate.result import FitEstimate


@dataclass
class LaunchRequest:
    """What Launch hands the main window: the validated config and what was known about it."""

    config: RunConfig
    preset: str | None
    warnings: list[str] = field(default_factory=list)
    estimate: FitEstimate | None = None
    seeds: list[int] | None = None  # a group of seeds (the Seeds field); None: one run, the config's own seed


class LaunchRow(QWidget):
    """Seeds and Launch on one line, the Seeds field's problem under them."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.launch_button = QPushButton("Launch")
        self.launch_button.setToolTip("Start the run (Ctrl+Enter)")
        self.launch_button.setDefault(True)
        self.seeds_edit = QLineEdit("1")
        self.seeds_edit.setToolTip(
            "Runs of this config, each with its own seed, launched together as a group:\n"
            "1 is a single run (its Seed setting); 5 is seeds 0-4; 3,7,11 those seeds.\n"
            "N runs start at once; to run them a few at a time, add the config to the Queue as a job with seeds.")
        self.seeds_edit.setPlaceholderText("1")
        self.seeds_edit.setMaximumWidth(self.seeds_edit.fontMetrics().horizontalAdvance("3,7,11,13,17") + 16)
        self.seeds_label = QLabel("Seeds")
        self.seeds_label.setBuddy(self.seeds_edit)
        self.seeds_label.setToolTip(self.seeds_edit.toolTip())
        self.seeds_error = WrapLabel()
        self.seeds_error.setStyleSheet(f"color: {error_color(self).name()}")
        self.seeds_error.hide()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        row = QHBoxLayout()
        row.setSpacing(6)
        row.addWidget(self.seeds_label, 0)
        row.addWidget(self.seeds_edit, 0)
        row.addWidget(self.launch_button, 1)
        column.addLayout(row, 0)
        column.addWidget(self.seeds_error, 0)

    def seeds(self) -> list[int] | None:
        """The Seeds field's seeds (None: a single run); ``ConfigError`` naming the field when it cannot be read."""
        return parse_seeds(self.seeds_edit.text(), "Seeds")

    def show_seeds(self, config_ok: bool) -> None:
        """Launch says how many runs it starts; a Seeds field it cannot read says why under it and disables Launch
        (as a config with errors does: ``config_ok`` False)."""
        try:
            seeds = self.seeds()
            problem = None
        except ConfigError as exc:
            seeds, problem = None, str(exc)
        if self.seeds_error.text() != (problem or ""):  # every validation comes here: change only what changed
            self.seeds_error.setText(problem or "")
            self.seeds_error.setVisible(problem is not None)
            self.seeds_edit.setStyleSheet(f"color: {error_color(self).name()}" if problem else "")
        text = f"Launch {len(seeds)} runs" if seeds else "Launch"
        tip = (f"Start {len(seeds)} runs of this config at once, {seeds_text(seeds)} (Ctrl+Enter)" if seeds
               else "Start the run (Ctrl+Enter)")
        if self.launch_button.text() != text:
            self.launch_button.setText(text)
        self.launch_button.setToolTip(tip)
        self.launch_button.setEnabled(config_ok and problem is None)
