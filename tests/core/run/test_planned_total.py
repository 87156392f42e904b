"""The runs list's total is the steps a run trains (whole rollouts), and never fewer than the steps it made."""

from __future__ import annotations

import json

from core.config.validate import validate_config
from core.run.store import RunStore, run_info
from core.util.files import write_json_atomic


def create(runs_dir, raw: dict):
    return RunStore(runs_dir).create(validate_config(raw).config)


def test_a_new_run_lists_the_steps_it_will_train(runs_dir):
    run = create(runs_dir, {"ppo": {"n_steps": 256}, "runtime": {"n_envs": 16}, "budget": {"total_timesteps": 33_000}})
    info = run_info(run)
    assert info.total == 36_864 and info.steps_text() == "0 / 36,864"


def test_a_running_run_counts_towards_its_progress_records_total(runs_dir):
    run = create(runs_dir, {"budget": {"total_timesteps": 33_000}})
    lines = [{"kind": "progress", "step": 2048 * i, "t": 1e9 + i, "fps": 1.0, "total": 40_960} for i in (1, 2)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert run_info(run).steps_text("/") == "4,096/40,960"


def test_a_run_from_before_the_planned_total_never_shows_fewer_than_it_made(runs_dir):
    # the window: "30,000 / 30,000 finished" for a run that made 32,769 steps
    run = create(runs_dir, {"budget": {"total_timesteps": 30_000}})
    status = json.loads((run / "status.json").read_text())
    del status["planned_timesteps"]
    write_json_atomic(run / "status.json", {**status, "state": "finished"})
    write_json_atomic(run / "summary.json", {"timesteps": 32_769})
    info = run_info(run)
    assert info.total == 30_000 and info.steps_text() == "32,769 / 32,769" and info.shown_total == 32_769


def test_a_baseline_lists_its_steps_alone(runs_dir):
    run = create(runs_dir, {"algo": "random"})
    info = run_info(run)
    assert info.total == 0 and info.steps_text() == "0"
