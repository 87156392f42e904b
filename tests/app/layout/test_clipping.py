"""Every word readable on the screens our users have: the real window opened at 1280x720 logical (1920x1080 at
150 %), 1366x768 and 1600x900, every tab and dialog visited (a run live, runs ticked in Results, the preset list
open), and not one button, tab, combo, label or field narrower than its text, nor a form wider than its view."""

from __future__ import annotations

import pytest

from tests.app.layout.screens import on_screen

pytestmark = pytest.mark.gui

# the laptop screens also run in the plain install (.ci/plain-check): what is installed must not widen the window
SCREENS = [pytest.param(1920, 1080, "1.5", marks=pytest.mark.plain), pytest.param(1366, 768, "1", marks=pytest.mark.plain),
           (1600, 900, "1")]
VIEWS = {"monitor-idle", "monitor", "runs", "results", "queue", "sweeps", "log", "system", "results-ticked", "configure-presets",
         "configure-laptop-preset", "tune", "morning-report", "notifications", "diff"}


@pytest.mark.parametrize("width, height, scale", SCREENS)
def test_no_word_is_cut_in_any_tab_or_dialog(tmp_path, runs_dir, width, height, scale):
    data = on_screen("tests.app.layout.tour", [str(runs_dir)], width, height, scale)
    assert set(data["views"]) == VIEWS  # every tab and dialog was visited
    found = [f"{view}: {line}" for view, lines in data["views"].items() for line in lines]
    print(f"{width}x{height} at {scale}: window {data['window']}, {len(found)} cut", *found, sep="\n")
    assert not found, "\n".join(found)
