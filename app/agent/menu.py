"""The Runs tab's Agent button: what to do with a run's trained agent (evaluate, watch, record, export).

Each tool adds its action here with ``add``; the button is enabled while the selected run keeps a
checkpoint (a run still training included: its latest checkpoint is used and the run is not disturbed).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget


class AgentMenu(QToolButton):
    """A button whose menu holds the agent's tools; each calls back with nothing (it reads the selected run)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setText("Agent")
        self.setToolTip("Use the selected run's trained agent: evaluate a checkpoint, watch it play, record a video, "
                        "export the policy")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMenu(QMenu(self))

    def add(self, text: str, tip: str, slot: Callable[[], object]) -> QAction:
        """A menu entry calling ``slot`` (what it returns is ignored); returns its action (tests trigger it)."""
        action = self.menu().addAction(text)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action
