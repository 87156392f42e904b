"""Issue 44, evaluate and groups at their edges: a summary.json of the wrong types, a group with a crashed seed, a
normalising config whose statistics are gone, evaluate while the trainer prunes, an env that hangs under evaluate.

Each is made to happen on real run folders (the session's trained run, copied) and real worker processes; the
tally's "evaluate and groups" line counts them beside the night's."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from core.run.layout import RunDir
from core.run.summary import summarize
from core.run.summary_file import read_summary
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
    assert read_summary(run) is not None  # the worker's own summary.json has the types the readers check
    RunDir(run).summary.write_text(json.dumps(damaged))
    assert read_summary(run) is None
    TALLY["damaged summaries read"] += 1
    info = run_info(run)
    assert info.steps == truth["timesteps"] and info.state == "finished"
    assert info.mean_reward == pytest.approx(truth["final_mean_reward"])
    row = result_row(run)
    assert (row.timesteps, row.episodes) == (truth["timesteps"], truth["episodes"])
    assert row.final_mean_reward == pytest.approx(truth["final_mean_reward"])


# --- a group with a crashed seed (item 9) ---------------------------------------------------------------------------

def _seed_group(runs_dir: Path) -> list[Path]:
    """The probe's group: two seeds that finished (236.82, 254.74) and one killed early at 53.66."""
    from core.run.status import write_status
    from tests.results_helpers import make_result_run

    runs = []
    for seed, (value, state, episodes) in enumerate([(236.82, "finished", 40), (53.66, "crashed", 4),
                                                      (254.74, "finished", 40)]):
        run = make_result_run(runs_dir, f"seed-{seed}", [value] * episodes, state=state, settings={"runtime.seed": seed})
        write_status(run, group={"id": "g44", "seed": seed, "size": 3})
        runs.append(run)
    return runs


def test_a_group_leaves_out_its_crashed_seed_and_lists_it(tmp_path, monkeypatch, capsys):
    from core.cli.main import main

    monkeypatch.setenv("RLPANEL_HOME", str(tmp_path))
    runs = _seed_group(tmp_path / "runs")
    TALLY["groups with unfinished seeds"] += 1
    assert main(["export", "--runs-dir", str(tmp_path / "runs"), "--all", "--group-by", "group", "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)["groups"][0]
    assert row["n"] == 2 and row["values"] == pytest.approx([236.82, 254.74]) and row["runs"] == [runs[0].name, runs[2].name]
    assert row["mean"] == pytest.approx((236.82 + 254.74) / 2)
    assert row["left_out"] == [f"{runs[1].name} (crashed at 80 steps)"]
    assert row["state"] == "2 finished; 1 crashed left out"

    assert main(["export", "--runs-dir", str(tmp_path / "runs"), "--all", "--group-by", "group", "--format", "json",
                 "--include-unfinished"]) == 0
    row = json.loads(capsys.readouterr().out)["groups"][0]
    assert row["n"] == 3 and row["values"] == pytest.approx([236.82, 53.66, 254.74]) and row["left_out"] == []
    assert row["state"] == "2 finished, 1 crashed"

    assert main(["export", "--runs-dir", str(tmp_path / "runs"), "--all", "--group-by", "group", "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "Left out" in text and f"{runs[1].name} (crashed at 80 steps)" in text and "--include-unfinished" in text

    assert main(["export", "--runs-dir", str(tmp_path / "runs"), "--all", "--include-unfinished"]) == 2
    assert "--include-unfinished counts the unfinished runs of seed groups" in capsys.readouterr().err

    since = time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() - 86_400))
    for extra, n in (([], 2), (["--include-unfinished"], 3)):  # the morning report's seed groups, the same rule
        assert main(["report", "--runs-dir", str(tmp_path / "runs"), "--since", since, "--json", *extra]) == 0
        [group] = json.loads(capsys.readouterr().out)["groups"]["groups"]
        assert group["n"] == n and len(group["left_out"]) == 3 - n


# --- a hanging env under evaluate (item 6) ------------------------------------------------------------------------

def test_evaluate_of_a_run_whose_env_hangs_ends_at_its_step_limit_naming_the_field(trained_run, tmp_path):
    import yaml

    from tests.training_helpers import cli

    run = copy_run(trained_run, tmp_path / "runs")
    raw = yaml.safe_load(RunDir(run).config.read_text())
    raw["env"].update({"id": None, "entry_point": "tests.faults.agent_envs:StuckCartPole", "step_timeout_s": 1.0})
    raw["runtime"]["vec_env"] = "subproc"
    RunDir(run).config.write_text(yaml.safe_dump(raw, sort_keys=False))
    TALLY["evaluate hangs cut"] += 1
    out = cli("evaluate", run.name, "--runs-dir", str(tmp_path / "runs"), "--episodes", "2", timeout=90)
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "took no step within 1 s (env.step_timeout_s: 1)" in out.stderr and "Traceback" not in out.stderr
    assert not RunDir(run).evaluations_file.exists()  # nothing recorded of a play that did not end


# --- evaluate while the trainer prunes (item 5), a normalising config whose statistics are gone (item 8) -----------

FAST_ENV = {"entry_point": "tests.core.run.fast_env:FastEpisodesEnv", "kwargs": {"steps": 5}}


def _normalising_run(runs_dir: Path, total: int, keep: int) -> Path:
    """A PPO run on a 5-step env with VecNormalize of observations, a checkpoint every 64 steps, ``keep`` kept."""
    from tests.training_helpers import make_run

    return make_run(runs_dir, {
        "algo": "PPO", "env": FAST_ENV, "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "runtime": {"n_envs": 1, "seed": 4, "vec_env": "dummy", "telemetry_hz": 0, "torch_threads": 1,
                    "normalize": {"obs": True}},
        "budget": {"total_timesteps": total, "checkpoint_every": 64, "keep_checkpoints": keep}})


@pytest.fixture(scope="module")
def normalising_run(tmp_path_factory) -> Path:
    """A finished normalising run with three checkpoints (64, 128, 192 steps): copy it before changing it."""
    import os

    from tests.training_helpers import run_worker

    folder = tmp_path_factory.mktemp("normalising")
    old = os.environ.get("RLPANEL_HOME")
    os.environ["RLPANEL_HOME"] = str(folder)
    try:
        run = _normalising_run(folder / "runs", 192, 3)
        assert run_worker(run) == 0, (run / "worker.log").read_text()
    finally:
        os.environ.pop("RLPANEL_HOME", None) if old is None else os.environ.update(RLPANEL_HOME=old)
    return run


def test_evaluate_while_the_trainer_prunes_each_checkpoint_reads_whole(tmp_path, monkeypatch):
    """``keep_checkpoints: 1`` and a checkpoint every 64 steps: each evaluation of ``last`` during training finds
    its checkpoint's model and statistics (the probe: [Errno 2] on the _vecnormalize.pkl half the time)."""
    from core.agent.evaluate import evaluate
    from core.launch.control import launch_worker
    from tests.training_helpers import wait_for

    monkeypatch.setenv("RLPANEL_HOME", str(tmp_path))
    run = _normalising_run(tmp_path / "runs", 6_400, 1)
    worker = launch_worker(run, reap=False)
    try:
        wait_for(lambda: RunDir(run).latest_checkpoint.is_file() or worker.poll() is not None, 120, "a first checkpoint")
        steps = []
        while worker.poll() is None:
            steps.append(evaluate(run, "last", episodes=1).checkpoint_step)
    finally:
        assert worker.wait(240) == 0, (run / "worker.log").read_text()
    TALLY["evaluates during pruning"] += len(steps)
    assert len(steps) >= 3 and len(set(steps)) >= 2, steps  # several evaluations, of checkpoints the trainer pruned
    assert len(list(RunDir(run).checkpoints.glob("step_*.zip"))) == 1


def test_a_checkpoint_removed_between_its_choice_and_its_read_is_chosen_again(normalising_run, tmp_path):
    from core.run.checkpoint_read import read_checkpoint
    from core.run.checkpoints import select_checkpoint

    run = copy_run(normalising_run, tmp_path / "runs")
    chosen: list[int] = []

    def pruned_after_choosing(run_dir: Path, which: str):
        checkpoint = select_checkpoint(run_dir, which)
        chosen.append(checkpoint.step)
        if len(chosen) == 1:  # the trainer prunes it (its statistics first) just after the reader chose it
            checkpoint.path(run_dir, "vecnormalize").unlink()
        return checkpoint

    read = read_checkpoint(run, "last", select=pruned_after_choosing)
    TALLY["evaluates during pruning"] += 1
    assert chosen == [192, 128] and read.checkpoint.step == 128 and set(read.files) == {"model", "vecnormalize"}
    assert read.files["vecnormalize"] == (RunDir(run).checkpoints / "step_000000000128_vecnormalize.pkl").read_bytes()


def test_a_moment_with_no_complete_checkpoint_is_waited_out_and_a_run_with_none_says_so(normalising_run, tmp_path):
    """Between a save and its prune (keep_checkpoints: 1) a reader may list no complete checkpoint at all: the old
    one's files gone, the new one's manifest not yet seen (CI: "has no complete checkpoint ... vecnormalize.pkl is
    missing" while training went on). The choice is made again; a run that truly has none still says why."""
    from core.run.checkpoint_read import TRIES, read_checkpoint
    from core.run.checkpoints import select_checkpoint

    run = copy_run(normalising_run, tmp_path / "runs")
    asked: list[int] = []

    def none_for_a_moment(run_dir: Path, which: str):
        asked.append(1)
        if len(asked) <= 2:
            raise LookupError(f"run {run_dir.name} has no complete checkpoint: the checkpoint at step 192 is missing")
        return select_checkpoint(run_dir, which)

    read = read_checkpoint(run, "last", select=none_for_a_moment)
    TALLY["evaluates during pruning"] += 1
    assert len(asked) == 3 and read.checkpoint.step == 192

    def never(run_dir: Path, which: str):
        asked.append(1)
        raise LookupError("run X has no complete checkpoint: every one is damaged")

    asked.clear()
    with pytest.raises(LookupError, match="every one is damaged"):
        read_checkpoint(run, "last", select=never)
    assert len(asked) == TRIES


def test_the_pruner_leaves_a_file_it_cannot_remove_for_its_next_prune(tmp_path):
    """On Windows a checkpoint file open in an evaluating process cannot be removed: the save goes on (the run does
    not crash) and the next prune removes what is left of that step."""
    from core.worker.checkpoints import Checkpointer

    saver = Checkpointer(tmp_path, keep=1)
    for step in (64, 128):
        for suffix in (".zip", "_vecnormalize.pkl", ".json"):
            (saver.folder / f"step_{step:012d}{suffix}").write_bytes(b"x")
    held = saver.folder / "step_000000000064_vecnormalize.pkl"
    held.unlink()
    held.mkdir()  # unlink() fails on it as on a file held open
    (held / "inside").write_bytes(b"x")
    saver._prune()
    assert sorted(p.name for p in saver.folder.iterdir()) == [
        "step_000000000064_vecnormalize.pkl", "step_000000000128.json", "step_000000000128.zip",
        "step_000000000128_vecnormalize.pkl"]
    (held / "inside").unlink()
    held.rmdir()
    held.write_bytes(b"x")  # released: the next save's prune takes it, though its model is gone
    for suffix in (".zip", ".json"):
        (saver.folder / f"step_{192:012d}{suffix}").write_bytes(b"x")
    saver._prune()
    assert sorted(p.name for p in saver.folder.iterdir()) == ["step_000000000192.json", "step_000000000192.zip"]


def _without_statistics(run: Path, how: str) -> None:
    """The newest checkpoint's statistics gone: its manifest entry (``entry``), or the file where no manifest names
    the files (``file``: a folder of a version before manifests)."""
    checkpoints = RunDir(run).checkpoints
    if how == "entry":
        for name in ("latest.json", "step_000000000192.json"):
            entry = json.loads((checkpoints / name).read_text())
            entry.pop("vecnormalize")
            (checkpoints / name).write_text(json.dumps(entry))
    else:
        for manifest in [*checkpoints.glob("step_*.json"), checkpoints / "latest.json"]:
            manifest.unlink()
        (checkpoints / "step_000000000192_vecnormalize.pkl").unlink()


@pytest.mark.parametrize("how", ["entry", "file"])
def test_a_normalising_run_whose_statistics_are_gone_is_not_played_raw(normalising_run, tmp_path, how):
    from tests.training_helpers import cli

    run = copy_run(normalising_run, tmp_path / "runs")
    _without_statistics(run, how)
    TALLY["raw plays refused"] += 2
    out = cli("evaluate", run.name, "--runs-dir", str(tmp_path / "runs"), "--episodes", "2")
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "the checkpoint at step 192 has no VecNormalize statistics" in out.stderr, out.stderr
    assert "runtime.normalize.obs: true" in out.stderr and "use --checkpoint with a step that has them (64, 128)" \
        in out.stderr and "Traceback" not in out.stderr
    exported = tmp_path / "policy.pt"
    out = cli("export-policy", run.name, "--runs-dir", str(tmp_path / "runs"), "--format", "torchscript", "-o",
              str(exported), "--check")
    assert out.returncode == 1 and "has no VecNormalize statistics" in out.stderr, (out.stdout, out.stderr)
    assert not exported.exists()
    assert cli("evaluate", run.name, "--runs-dir", str(tmp_path / "runs"), "--episodes", "2", "--checkpoint",
               "128").returncode == 0  # a checkpoint with its statistics plays
