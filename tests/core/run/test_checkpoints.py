"""Issue 11, point 11 (and 13): resume falls back to the newest complete checkpoint and says so;
nothing ``latest.json`` names outside the run's checkpoints folder is ever opened."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.launch.control import ResumeError, resume_run
from core.run.checkpoints import find_checkpoint
from core.run.layout import RunDir
from tests.training_helpers import copy_run, records, wait_state


def steps_of(run) -> list[int]:
    return sorted(int(p.name[5:17]) for p in RunDir(run).checkpoints.glob("step_*.zip"))


def test_the_template_has_complete_checkpoints_with_manifests(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir)
    choice = find_checkpoint(run)
    assert choice.checkpoint is not None and not choice.skipped
    assert choice.checkpoint.step == steps_of(run)[-1]
    manifest = json.loads(RunDir(run).checkpoint_file(choice.checkpoint.step, "manifest").read_text())
    assert manifest["sizes"], "the manifest records each file's size"


@pytest.mark.parametrize("damage", ["truncated", "empty", "missing", "not-a-zip"])
def test_a_damaged_newest_checkpoint_falls_back_to_the_older_one(trained_run, runs_dir, damage):
    run = copy_run(trained_run, runs_dir, state="stopped")
    older, newest = steps_of(run)[-2:]
    model = RunDir(run).checkpoint_file(newest, "model")
    data = model.read_bytes()
    if damage == "truncated":
        model.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        model.write_bytes(b"")
    elif damage == "missing":
        model.unlink()
    else:
        model.write_bytes(b"x" * len(data))
    choice = find_checkpoint(run)
    assert choice.checkpoint is not None and choice.checkpoint.step == older
    assert f"step {newest:,}" in choice.note and f"using the checkpoint at step {older:,}" in choice.note


@pytest.mark.parametrize("name", ["../../status.json", "/etc/passwd", "..\\..\\x.zip", "step_000000000001.zip", 5, None])
def test_latest_json_never_points_outside_the_checkpoints_folder(trained_run, runs_dir, name):
    run = copy_run(trained_run, runs_dir)
    newest = steps_of(run)[-1]
    layout = RunDir(run)
    entry = json.loads(layout.latest_checkpoint.read_text())
    entry["model"] = name
    layout.latest_checkpoint.write_text(json.dumps(entry))
    choice = find_checkpoint(run)
    # the same step's own manifest still names its real files
    assert choice.checkpoint is not None and choice.checkpoint.step == newest
    assert choice.checkpoint.files["model"] == layout.checkpoint_file(newest, "model").name
    assert all(layout.checkpoints / n == (layout.checkpoints / n).resolve().parent / n for n in choice.checkpoint.files.values())
    if name is not None:
        assert choice.skipped and "latest.json" in choice.skipped[0]


@pytest.mark.parametrize("latest", ["{}", '{"model": "step_000000001024.zip"}', "[1]", "not json", '{"step": "x"}'])
def test_latest_json_without_a_step_falls_back_to_the_manifests(trained_run, runs_dir, latest):
    run = copy_run(trained_run, runs_dir)
    RunDir(run).latest_checkpoint.write_text(latest)
    assert find_checkpoint(run).checkpoint.step == steps_of(run)[-1]


def test_no_complete_checkpoint_is_one_clear_error(trained_run, runs_dir, capsys):
    run = copy_run(trained_run, runs_dir, state="crashed")
    for step in steps_of(run):
        model = RunDir(run).checkpoint_file(step, "model")
        model.write_bytes(model.read_bytes()[:100])
    with pytest.raises(ResumeError, match="no complete checkpoint") as err:
        resume_run(run)
    assert "cut short" in str(err.value) or "not a complete zip" in str(err.value)
    assert main(["resume", run.name, "--runs-dir", str(runs_dir)]) != 0
    out, errtext = capsys.readouterr()
    assert "Traceback" not in out + errtext and "no complete checkpoint" in errtext


@pytest.mark.training
def test_resume_uses_the_older_checkpoint_and_says_so(trained_run, runs_dir):
    run = copy_run(trained_run, runs_dir, state="crashed")
    older, newest = steps_of(run)[-2:]
    model = RunDir(run).checkpoint_file(newest, "model")
    model.write_bytes(model.read_bytes()[:1000])
    step, total = resume_run(run, more_steps=256, reap=False)
    assert step == older and total == older + 256
    wait_state(run, ("finished", "failed"), timeout=240)
    messages = [e["message"] for e in records(run, "event")]
    assert any(m.startswith("resuming from an older checkpoint") and f"step {newest:,}" in m for m in messages)
    assert f"resumed from the checkpoint at step {older:,}" in messages
    progress = [r["step"] for r in records(run, "progress")]
    assert progress == sorted(progress) and progress[-1] >= older + 256


def test_two_resumes_at_once_launch_one_attempt(trained_run, runs_dir):
    """The second resume finds the run ``starting`` (under the run's control lock) and is refused."""
    run = copy_run(trained_run, runs_dir, state="stopped")
    resume_run(run, more_steps=128)
    with pytest.raises(ResumeError, match="starting|running"):
        resume_run(run, more_steps=128)
