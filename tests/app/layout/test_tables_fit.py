"""The numbers that matter in view on a laptop: the real window at 1280x720 logical (1920x1080 at 150 %) and 1366x768
over a folder with a group of three seeds, a random baseline and a live run. The Runs table shows the name, state,
steps and mean reward, and Results the name, the figure with its interval and the difference from the baseline,
all without a sideways scroll; the baseline combo tells every run apart by name, algorithm and env; an 11-entry
legend stands beside the plot, over neither the curves nor the baseline's label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.layout.screens import LAPTOPS, on_screen
from tests.app.layout.tables_tour import IMPORTANT, columns_cut

pytestmark = pytest.mark.gui

SCREENS = LAPTOPS


def measure(tmp_path: Path, runs_dir: Path, width: int, height: int, scale: str) -> dict:
    return on_screen("tests.app.layout.tables_tour", [str(runs_dir)], width, height, scale)


@pytest.mark.parametrize("width, height, scale", SCREENS)
def test_the_numbers_that_matter_are_in_view_on_a_laptop(tmp_path, runs_dir, width, height, scale):
    data = measure(tmp_path, runs_dir, width, height, scale)
    cut = [line for view in IMPORTANT for line in columns_cut(view, data["columns"][view])]
    print(f"{width}x{height} at {scale}: window {data['window']}", json.dumps(data["columns"]), sep="\n")
    assert not cut, "\n".join(cut)
    # Configure gives Results its room on a laptop, and is back with the other tabs
    assert data["configure_shown"] == {"Runs": True, "Results": False, "Monitor": True}

    texts = {text: tip for text, tip in data["baseline"]}
    assert len(texts) == len(data["baseline"]), f"two entries read alike: {[t for t, _ in data['baseline']]}"
    ids = data["ids"]
    assert ids["base"] in texts["base (random, CartPole-v1)"]  # the id in the tooltip, the name whole
    for seed in range(3):  # a group's runs share their name: told apart by their seed
        assert ids[f"ppo2-s{seed}"] in texts[f"ppo2, seed {seed} (PPO, CartPole-v1)"]
    unnamed = next(text for text, tip in texts.items() if tip.split("\n")[0] == ids["unnamed"])
    assert unnamed.startswith("run of ") and unnamed.endswith(" (PPO, CartPole-v1)")  # not an id cut in the middle
    assert not any("…-" in text for text in texts)

    legend = data["legend"]
    assert legend["entries"] == 11 and legend["in_plot"]
    assert legend["over_view_box_px"][0] < 1 and not legend["over_baseline_label"]  # beside the plot, over nothing
