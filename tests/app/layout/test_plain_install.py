"""The window of the install the README gives (no extras): without sb3-contrib the algorithm box holds a note on
how to get its algorithms, and that note, like any text that only some installs, machines or users have, never
sets the window's width. The developers' environment has sb3-contrib: its absence is simulated here."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.config.algorithms.contrib import CONTRIB_FIX
from tests.app.configure.helpers import wait_settled

SMALL_COMBO = 300  # px: room for "RecurrentPPO" and its arrow; the whole note was 582


@pytest.fixture
def without_contrib(monkeypatch):
    # installed_algorithms and missing_algorithms (what env_picker imports) ask this function at each call
    monkeypatch.setattr("core.config.algorithms.contrib.contrib_installed", lambda: False)


# the window's room on a 1920x1080 laptop at 150 % (1280x720 logical) and on a 1366x768 one, less the title bar
@pytest.mark.parametrize("width, height", [(1280, 688), (1366, 736)])
def test_without_sb3_contrib_the_window_fits_a_laptop_screen(without_contrib, make_window, qtbot, width, height):
    window = make_window()
    combo = window.configure.env_picker.algo_combo
    notes = [i for i in range(combo.count()) if combo.itemText(i) and not combo.model().item(i).isEnabled()]
    assert len(notes) == 1  # the plain install's box, really: its note on sb3-contrib
    assert combo.minimumSizeHint().width() < SMALL_COMBO and combo.sizeHint().width() < SMALL_COMBO
    assert CONTRIB_FIX in combo.itemData(notes[0], Qt.ItemDataRole.ToolTipRole)  # the whole note: on its line
    window.resize(width, height)
    window.configure.set_compact(True)
    wait_settled(qtbot, window.configure)
    for index in range(window.tabs.count()):  # each tab built (most are built when first shown): each one's width counts
        window.tabs.setCurrentIndex(index)
        QApplication.processEvents()
    window.tabs.setCurrentIndex(0)
    QApplication.processEvents()
    assert window.minimumSizeHint().width() <= width
    assert window.width() <= width
    assert window.configure.minimumSizeHint().width() + window.tabs.minimumSizeHint().width() <= width
