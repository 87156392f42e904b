"""The Runs tab's Steps column: the steps made of the steps the run trains, never "x / fewer"."""

from __future__ import annotations

import time
from pathlib import Path

from app.runs.rows import COLUMNS, run_row
from core.run.store import RunInfo


def steps_cell(info: RunInfo) -> str:
    return run_row(info, time.time()).text(COLUMNS.index("Steps"))


def test_the_steps_column_counts_towards_the_planned_steps():
    info = RunInfo(id="r", path=Path("r"), state="running", algo="PPO", steps=20_480, total=40_960)
    assert steps_cell(info) == "20,480 / 40,960"


def test_a_run_past_its_total_shows_its_steps_as_the_total():
    info = RunInfo(id="r", path=Path("r"), state="finished", algo="ARS", steps=32_769, total=30_000)
    assert steps_cell(info) == "32,769 / 32,769"
