"""Issue 44, evaluate and groups at their edges: a summary.json of the wrong types, a group with a crashed seed, a
normalising config whose statistics are gone, evaluate while the trainer prunes, an env that hangs under evaluate.

Each is made to happen on real run folders (the session's trained run, copied) and real worker processes; the
tally's "evaluate and groups" line counts them beside the night's."""

from __future__ import annotations

import json

import pytest

from core.run.layout import RunDir
from core.run.summary import summarize
from tests.faults.conftest import TALLY
from tests.training_helpers import copy_run

WRONG_SUMMARIES = [
    {"timesteps": "lots", "episodes": [3], "final_mean_reward": "high"},
    {"timesteps": 1.5e3, "episodes": None},
    {"timesteps": True, "episodes": 2, "final_mean_reward": {"mean": 1}},
    ["not", "a", "summary"],
]


@pytest.mark.parametrize("damaged", WRONG_SUMMARIES, ids=["strings", "float-steps", "bool-steps", "a-list"])
def test_a_summary_of_the_wrong_types_falls_back_to_the_records(trained_run, tmp_path, damaged):
    from core.results.table import result_row
    from core.run.store import run_info

    run = copy_run(trained_run, tmp_path / "runs")
    truth = summarize(run)
    assert truth["timesteps"] > 0 and truth["episodes"] > 0
    RunDir(run).summary.write_text(json.dumps(damaged))
    TALLY["damaged summaries read"] += 1
    info = run_info(run)
    assert info.steps == truth["timesteps"] and info.state == "finished"
    assert info.mean_reward == pytest.approx(truth["final_mean_reward"])
    row = result_row(run)
    assert (row.timesteps, row.episodes) == (truth["timesteps"], truth["episodes"])
    assert row.final_mean_reward == pytest.approx(truth["final_mean_reward"])
