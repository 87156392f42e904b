"""Shared helpers for the Configure panel tests."""

from __future__ import annotations

from app.configure.panel import ConfigurePanel

TIMEOUT_MS = 30_000  # generous: other suites may be loading the 2-core machine


def settled(panel: ConfigurePanel) -> bool:
    """No validation pending and the env's spaces known (so errors and estimate are final)."""
    return panel.model.settled()


def wait_settled(qtbot, panel: ConfigurePanel) -> None:
    qtbot.waitUntil(lambda: settled(panel), timeout=TIMEOUT_MS)
    panel.validate_now()


def type_into(qtbot, panel: ConfigurePanel, path: str, text: str) -> None:
    """Replace a field's text by typing, as a user would."""
    row = panel.rows[path]
    line = row.editor.lineEdit() if hasattr(row.editor, "lineEdit") else row.editor
    line.setFocus()
    line.selectAll()
    qtbot.keyClicks(line, text)


def new_panel(qtbot):
    """Body of each test module's ``panel`` fixture: a panel, and its probe threads done after."""
    widget = ConfigurePanel()
    qtbot.addWidget(widget)
    widget.resize(520, 1000)
    yield widget
    widget.model.spaces.wait(TIMEOUT_MS)
