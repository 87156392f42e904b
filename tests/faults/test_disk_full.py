"""A full disk on a small tmpfs (root only): the pre-launch check refuses what cannot fit; a disk
that fills up mid-run ends the run ``failed`` with the reason and no temp files; once space is
back, the run resumes from its last checkpoint."""

from __future__ import annotations

import errno

import pytest

from core.cli.main import main
from core.launch.control import launch_worker, resume_run
from core.run.checkpoints import find_checkpoint
from core.run.layout import CHECKPOINT_TEMP_PREFIX, RunDir
from core.run.status import read_status
from tests.training_helpers import make_run, wait_for, wait_state

pytestmark = pytest.mark.training


def fill(folder) -> None:
    """Write until the disk is full (big chunks, then small ones for the last bytes)."""
    for n, size in enumerate((1 << 20, 4096, 1)):
        try:
            with open(folder / f"filler-{n}", "wb", buffering=0) as fh:
                while True:
                    fh.write(b"\0" * size)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def test_train_refuses_a_run_whose_checkpoints_cannot_fit(small_disk, capsys):
    runs = small_disk / "runs"
    code = main(["train", "--algo", "DQN", "--env", "CartPole-v1", "--set", "dqn.buffer_size=1000000", "--detach",
                 "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert code != 0 and "not enough free disk space" in err and "Traceback" not in err
    assert not runs.exists() or list(runs.iterdir()) == []


def test_train_on_a_full_disk_leaves_no_empty_run_folder(small_disk, capsys):
    runs = small_disk / "runs"
    runs.mkdir()
    fill(small_disk)
    code = main(["train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "1", "--detach", "--runs-dir", str(runs)])
    err = capsys.readouterr().err
    assert code != 0 and "no space left on device" in err and "Traceback" not in err
    assert list(runs.iterdir()) == []


def test_a_disk_that_fills_mid_run_ends_failed_with_the_reason_and_resumes_later(small_disk):
    runs = small_disk / "runs"
    run = make_run(runs, {"algo": "PPO", "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1}, "runtime": {"n_envs": 1},
                          "budget": {"total_timesteps": 10_000_000, "checkpoint_every": 256, "keep_checkpoints": 2}})
    launch_worker(run)
    wait_for(lambda: find_checkpoint(run).checkpoint, timeout=240, what="a first checkpoint")
    fill(small_disk)
    wait_state(run, ("failed",), timeout=240)
    status = read_status(run)
    assert status.exit_reason.startswith("no space left on device"), status
    assert "resumes from its last checkpoint once there is space" in status.exit_reason
    assert not [p for p in RunDir(run).checkpoints.iterdir() if p.name.startswith(CHECKPOINT_TEMP_PREFIX)]
    good = find_checkpoint(run).checkpoint
    assert good is not None
    for path in small_disk.glob("filler*"):
        path.unlink()
    step, total = resume_run(run, more_steps=256)
    assert step == good.step
    wait_state(run, ("finished",), timeout=240)
