"""Issue 11, point 10: the pre-launch check refuses a run whose checkpoints would not fit on the disk;
its estimate of a checkpoint's size is close to what SB3 really writes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.config.spaces import probe_spaces
from core.config.validate import validate_config
from core.estimate import disk
from core.run.checkpoints import find_checkpoint
from core.run.store import load_run_config


def test_checkpoint_estimate_is_close_to_a_real_checkpoint(trained_run):
    cfg = load_run_config(trained_run)
    ckpt = find_checkpoint(trained_run).checkpoint
    real = ckpt.path(trained_run, "model").stat().st_size
    estimate = disk.checkpoint_bytes(cfg, probe_spaces(cfg.env))
    assert 0.5 * real <= estimate <= 2 * real, (estimate, real)


def test_replay_buffer_and_kept_count_are_counted():
    small = validate_config({"algo": "DQN", "dqn": {"buffer_size": 1000}}).config
    big = validate_config({"algo": "DQN", "dqn": {"buffer_size": 100_000}}).config
    spaces = probe_spaces(small.env)
    assert disk.checkpoint_bytes(big, spaces) - disk.checkpoint_bytes(small, spaces) > 99_000 * 4 * 4 * 2
    keep5 = validate_config({"algo": "DQN", "budget": {"keep_checkpoints": 5}}).config
    assert disk.disk_needed(keep5, spaces) == 6 * disk.checkpoint_bytes(keep5, spaces)
    assert disk.checkpoint_bytes(validate_config({"algo": "random"}).config, spaces) == 0


def test_too_little_free_space_is_refused_with_the_numbers_and_the_fix(tmp_path, monkeypatch):
    cfg = validate_config({"algo": "DQN", "dqn": {"buffer_size": 100_000}}).config
    spaces = probe_spaces(cfg.env)
    assert disk.free_space_problem(tmp_path, cfg, spaces) is None
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: SimpleNamespace(free=1_000_000, total=10**9, used=0))
    problem = disk.free_space_problem(tmp_path / "not-yet", cfg, spaces)
    assert problem and "not enough free disk space" in problem and "1.0 MiB free" in problem
    assert "budget.keep_checkpoints" in problem and "--runs-dir" in problem


@pytest.mark.parametrize("command", [["train", "--algo", "DQN", "--env", "CartPole-v1", "--detach"]])
def test_cli_train_refuses_before_creating_a_run_folder(runs_dir, monkeypatch, capsys, command):
    from core.cli.main import main

    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: SimpleNamespace(free=1_000, total=10**9, used=0))
    assert main([*command, "--runs-dir", str(runs_dir)]) != 0
    err = capsys.readouterr().err
    assert "not enough free disk space" in err and "Traceback" not in err
    assert list(runs_dir.iterdir()) == []
