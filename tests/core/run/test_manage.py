"""Run management: display name, tags and note beside the worker's files; restart from step 0;
delete to the system's trash; TensorBoard on a run's logs. Through ``core`` and the ``rlpanel``
command, with real files, a real worker and the real TensorBoard."""

from __future__ import annotations

import json
import os
import urllib.request

import pytest

from core.launch.control import ResumeError, RunStateError, delete_run, resume_run
from core.launch.start import restart_run
from core.run.annotations import AnnotationError, Annotations, annotate, read_annotations, write_annotations
from core.run.layout import RunDir
from core.run.status import read_status
from core.run.store import RunStore, run_info
from core.run.tensorboard import MISSING, TensorBoard, TensorBoardError
from core.util.files import read_json
from core.util.jsonl import read_jsonl
from tests.results_helpers import make_result_run
from tests.training_helpers import cli, make_run, wait_state


def test_annotations_live_in_their_own_file_and_never_rename_the_folder(runs_dir):
    run = make_result_run(runs_dir, "night", [1.0, 2.0])
    status_before = (run / "status.json").read_text()
    stored = annotate(run, name="  lr 3e-4, seed 2  ", add_tags=("sweep", "night-3", "sweep"), note="the good one\n")
    assert stored == Annotations("lr 3e-4, seed 2", ("sweep", "night-3"), "the good one")
    assert json.loads(RunDir(run).annotations.read_text()) == stored.to_json()
    assert (run / "status.json").read_text() == status_before  # the worker's file is untouched
    info = run_info(run)
    assert (info.id, info.display_name, info.label, info.tags) == (run.name, "lr 3e-4, seed 2", "lr 3e-4, seed 2",
                                                                  ("sweep", "night-3"))
    assert annotate(run, remove_tags=("sweep",)).tags == ("night-3",)  # the rest stays
    assert annotate(run, clear_name=True).display_name is None and run_info(run).label == "night"


@pytest.mark.parametrize(("change", "words"), [
    ({"name": "x" * 81}, "display name: 81 characters; use at most 80"),
    ({"name": "two\nlines"}, "one line"),
    ({"add_tags": ("has space",)}, "tag 'has space': one word"),
    ({"note": "n" * 4001}, "note: 4001 characters"),
])
def test_a_bad_annotation_is_refused_naming_it_and_nothing_changes(runs_dir, change, words):
    run = make_result_run(runs_dir, "keep", [1.0])
    annotate(run, name="kept", add_tags=("a",))
    with pytest.raises(AnnotationError, match=words):
        annotate(run, **change)
    assert read_annotations(run) == Annotations("kept", ("a",), "")


def test_a_broken_annotations_file_reads_as_none_and_hides_nothing(runs_dir):
    run = make_result_run(runs_dir, "odd", [1.0])
    RunDir(run).annotations.write_text("{not json")
    assert read_annotations(run) == Annotations()
    assert [i.id for i in RunStore(runs_dir).list()] == [run.name]
    with pytest.raises(AnnotationError, match="not a run folder"):
        write_annotations(runs_dir / "nothing-here", Annotations("x"))


def test_cli_annotate_filter_by_tag_and_delete_to_the_trash(runs_dir, tmp_path, monkeypatch):
    keep = make_result_run(runs_dir, "keep", [1.0])
    gone = make_result_run(runs_dir, "gone", [2.0])
    out = cli("annotate", keep.name, "--name", "best so far", "--tag", "sweep", "--note", "lr 1e-3", "--runs-dir", str(runs_dir))
    assert out.returncode == 0, out.stderr
    assert "best so far" in out.stdout and "sweep" in out.stdout
    listed = cli("runs", "--tag", "sweep", "--json", "--runs-dir", str(runs_dir))
    assert [r["id"] for r in json.loads(listed.stdout)] == [keep.name]
    assert json.loads(listed.stdout)[0]["display_name"] == "best so far"
    table = cli("runs", "--runs-dir", str(runs_dir)).stdout
    assert "NAME" in table.splitlines()[0] and "best so far" in table and "TAGS" in table.splitlines()[0]
    bad = cli("annotate", keep.name, "--tag", "two words", "--runs-dir", str(runs_dir))
    assert bad.returncode == 2 and "tag 'two words'" in bad.stderr and "nothing was changed" in bad.stderr

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # the trash of a test, not the user's
    env = {**os.environ}
    import subprocess
    import sys

    from tests.conftest import REPO

    done = subprocess.run([sys.executable, "-m", "core.cli", "delete", gone.name, "--runs-dir", str(runs_dir)],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not gone.exists() and (tmp_path / "xdg" / "Trash" / "files" / gone.name / "config.yaml").is_file()
    assert [i.id for i in RunStore(runs_dir).list()] == [keep.name]


def test_rlpanel_runs_names_each_run_as_the_window_does(runs_dir):
    from core.run.names import read_run_label

    named = make_result_run(runs_dir, "night-ppo", [1.0])  # named in Configure or a queue job: no annotation
    trial = make_result_run(runs_dir, "base", [1.0])
    annotate(trial, name="lr-sweep #3")
    listed = {r["id"]: r for r in json.loads(cli("runs", "--json", "--runs-dir", str(runs_dir)).stdout)}
    assert listed[named.name]["label"] == "night-ppo" == read_run_label(named)
    assert listed[trial.name]["label"] == "lr-sweep #3" == read_run_label(trial)
    table = cli("runs", "--runs-dir", str(runs_dir)).stdout.splitlines()
    assert "NAME" in table[0]
    assert "night-ppo" in next(line for line in table if line.startswith(named.name)).removeprefix(named.name)
    assert "lr-sweep #3" in next(line for line in table if line.startswith(trial.name))


def test_delete_refuses_a_running_run_and_a_folder_that_is_not_a_run(runs_dir, tmp_path, monkeypatch):
    from tests.app.fake_runs import make_fake_run

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    running = make_fake_run(runs_dir, state="running")  # this test process is its "worker"
    with pytest.raises(RunStateError, match="is running; stop it first"):
        delete_run(running)
    (runs_dir / "stray").mkdir()
    with pytest.raises(RunStateError, match="not a run folder"):
        delete_run(runs_dir / "stray")
    assert running.exists() and (runs_dir / "stray").exists()


def test_resume_without_a_checkpoint_points_to_restart(runs_dir):
    run = make_result_run(runs_dir, "early", [1.0], state="crashed")
    expected = f"no complete checkpoint to resume from; restart it from step 0 with: rlpanel restart {run.name}"
    with pytest.raises(ResumeError, match=expected):
        resume_run(run)


@pytest.mark.training
def test_restart_trains_again_from_step_zero_and_keeps_the_old_curve_as_superseded(runs_dir):
    run = make_run(runs_dir, {"algo": "random", "env": {"id": "CartPole-v1"}, "budget": {"episodes": 4}})
    old = [{"kind": "attempt", "t": 1.0, "step": 0, "attempt": 1},
           {"kind": "episode", "step": 999_000, "t": 2.0, "reward": -7.0, "length": 3}]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "latest.json").write_text('{"step": 999000, "model": "step_x.zip"}')
    status = json.loads((run / "status.json").read_text())
    status.update(state="failed", attempt=1, started_at=1.0, train_time_s=500.0)
    (run / "status.json").write_text(json.dumps(status))

    assert restart_run(run) == 2
    assert wait_state(run, ("finished", "failed", "crashed"), timeout=240) == "finished", (run / "worker.log").read_text()
    records = read_jsonl(run / "metrics.jsonl")
    assert records[0]["kind"] == "attempt" and records[0]["attempt"] == 2 and records[0]["step"] == 0
    episodes = [r for r in records if r["kind"] == "episode"]
    assert len(episodes) == 4 and all(e["step"] < 999_000 for e in episodes)  # from step 0, none of the old attempt
    assert read_jsonl(run / "metrics.superseded.jsonl") == old
    assert not (run / "checkpoints" / "latest.json").exists()  # a later resume cannot pick the old weights
    assert (run / "checkpoints.superseded" / "latest.json").is_file()
    status = read_status(run)
    assert status.attempt == 2 and status.started_at > 1.0 and status.train_time_s < 500.0
    assert read_json(run / "summary.json")["episodes"] == 4


def test_restart_refuses_a_running_run(runs_dir):
    from tests.app.fake_runs import make_fake_run

    running = make_fake_run(runs_dir, state="running")
    with pytest.raises(RunStateError, match="is running; stop it first"):
        restart_run(running)
    out = cli("restart", running.name, "--runs-dir", str(runs_dir))
    assert out.returncode == 1 and "stop it first" in out.stderr


def test_tensorboard_serves_a_run_on_localhost_and_stops(runs_dir):
    run = make_result_run(runs_dir, "tb", [1.0])
    (run / "tb").mkdir()
    board = TensorBoard(run)
    board.start()
    try:
        url = board.wait_ready()
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and b"TensorBoard" in page.read()
    finally:
        board.stop()
    assert not board.running()


def test_tensorboard_says_why_it_cannot_show_a_run(runs_dir, monkeypatch):
    run = make_result_run(runs_dir, "nolog", [1.0], algo="random")
    with pytest.raises(TensorBoardError, match="has no TensorBoard logs"):
        TensorBoard(run).start()
    (run / "tb").mkdir()
    monkeypatch.setitem(__import__("sys").modules, "tensorboard", None)  # as if it were not installed
    with pytest.raises(TensorBoardError, match="pip install tensorboard"):
        TensorBoard(run).start()
    assert "pip install tensorboard" in MISSING
