"""Issue 11, point 4 in the window: a preset with a wrong ``base`` or nesting past the limit is
listed as broken in the Presets box and every other preset stays usable."""

from __future__ import annotations

import pytest

from app.configure.panel import ConfigurePanel
from core.util.paths import user_presets_dir
from tests.app.configure.helpers import TIMEOUT_MS, wait_settled

pytestmark = pytest.mark.gui


def test_presets_box_lists_damaged_presets_and_keeps_the_others(qtbot):
    folder = user_presets_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "base-list.yaml").write_text("base: [1, 2]\n")
    (folder / "base-dict.yaml").write_text("base: {a: 1}\n")
    (folder / "deep.yaml").write_text("ppo: " + "[" * 100 + "]" * 100 + "\n")
    p = ConfigurePanel()
    qtbot.addWidget(p)
    broken = p.presets_box.broken()
    assert "base must be the name of a preset" in broken["base-list"] and "base-dict" in broken
    assert "deeper than" in broken["deep"]
    assert "fast" not in broken
    p.select_preset("fast")
    wait_settled(qtbot, p)
    assert p.current_preset() == "fast" and p.current_config().ppo.n_epochs == 15
    p.model.spaces.wait(TIMEOUT_MS)
