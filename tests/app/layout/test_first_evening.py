"""A user's first evening on a laptop, in the real window of the plain install (issue 42): a group of two seeds and a
random baseline trained for real, laptop-8gb picked on CartPole-v1 and a run launched from Configure, followed in the
Monitor with its collect/train bar, then Runs, Results (the group and the baseline ticked, then a row per group) and
Queue, and the run stopped. At 1280x720 logical (1920x1080 at 150 %) and 1366x768, no view cuts a word or shows a chart
under 100 px, every control a toolbar row hides is offered by its », and the reward and difference columns are in
view (``tests/app/layout/evening.py`` drives the window; the checks are the layout tests' own, here together)."""

from __future__ import annotations

import pytest

from tests.app.layout.screens import LAPTOPS, on_screen

pytestmark = [pytest.mark.gui, pytest.mark.training, pytest.mark.plain]

VIEWS = {"configure", "monitor", "runs", "results", "results-groups", "queue"}


@pytest.mark.timeout(600)  # a real run starts, trains its first 8,192 steps and an update, and stops: ~45 s here
@pytest.mark.parametrize(("width", "height", "scale"), LAPTOPS)
def test_a_first_evening_on_a_laptop_reads_whole_and_reaches_everything(runs_dir, width, height, scale):
    data = on_screen("tests.app.layout.evening", [str(runs_dir)], width, height, scale, timeout=540)  # checks its screen
    print(f"{width}x{height} at {scale}: window {data['window']}, run {data['run']}",
          *(f"asked: {q['title']}: {q['text']!r}" for q in data["questions"]),
          *(f"{view}: behind »: {controls}" for view, controls in data["behind_more"].items() if controls), sep="\n")
    assert set(data["views"]) == VIEWS  # every step of the evening was taken
    assert data["run"]["state"] == "stopped"  # launched, followed and stopped cleanly: no worker left behind
    found = [f"{view}: {line}" for view, lines in data["views"].items() for line in lines]
    found += [f"the question {q['title']!r}: {line}" for q in data["questions"] for line in q["cut"]]
    assert not found, "\n".join(found)
