"""The Results panel over each test module's own ``runs`` fixture (the ticked runs it offers)."""

from __future__ import annotations

import pytest

from app.results.panel import ResultsPanel


@pytest.fixture
def panel(qtbot, runs_dir, runs):
    widget = ResultsPanel(runs_dir)
    qtbot.addWidget(widget)
    widget.resize(1200, 700)
    yield widget
    widget.close_loader()
