"""Issue 25, part 3: one launch path. ``start_run`` is what the window's Launch, ``rlpanel train``, the queue
and sweep runners call; ``restart_run`` makes the same check first. A real tiny run goes through it."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from core.config.trust import trust
from core.config.validate import validate_config
from core.estimate import disk
from core.launch.start import StartError, restart_run, start_run
from core.run.status import read_status
from core.run.store import RunStore, load_run_config
from core.util.files import read_json
from tests.training_helpers import lean, make_run

ENV_MODULE = '''
from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class FolderCartPole(CartPoleEnv):
    """CartPole importable only from the folder the run was started from."""
'''

TINY_PPO = {"algo": "PPO", "ppo": {"n_steps": 64, "batch_size": 32}, "runtime": {"n_envs": 2},
            "budget": {"total_timesteps": 256, "checkpoint_every": 128}}


@pytest.mark.training
def test_a_run_started_through_start_run_trains_from_its_import_folder(tmp_path, runs_dir):
    project = tmp_path / "my project"
    project.mkdir()
    (project / "folder_cartpole.py").write_text(ENV_MODULE)
    trust("folder_cartpole")
    cfg = validate_config(lean({**TINY_PPO, "env": {"entry_point": "folder_cartpole:FolderCartPole"}})).config
    seen: list[str] = []

    def on_created(run):  # the queue and sweep runners record the run id here: before its worker starts
        seen.append(read_status(run).state)

    started = start_run(RunStore(runs_dir), cfg, "my-preset", ["a warning"], import_folder=str(project),
                        extra_status={"queue": {"id": "q", "job": "a"}}, on_created=on_created, reap=False)
    assert started.process.wait(300) == 0, (started.run_dir / "worker.log").read_text()
    assert seen == ["queued"]
    status = read_status(started.run_dir)
    assert status.state == "finished" and status.preset == "my-preset" and status.warnings == ["a warning"]
    assert status.queue == {"id": "q", "job": "a"}
    assert load_run_config(started.run_dir).env.path == str(project)  # recorded: a resume imports from there too
    assert read_json(started.run_dir / "summary.json")["timesteps"] >= 256


def test_a_full_disk_is_refused_with_the_fix_and_no_run_folder(runs_dir, monkeypatch):
    cfg = validate_config({"algo": "DQN", "dqn": {"buffer_size": 100_000}}).config
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: SimpleNamespace(free=1_000, total=10**9, used=0))
    with pytest.raises(StartError, match="not enough free disk space") as refused:
        start_run(RunStore(runs_dir), cfg, import_folder="/somewhere")
    assert "budget.keep_checkpoints" in str(refused.value) and "--runs-dir" in str(refused.value)
    assert list(runs_dir.iterdir()) == []


def test_a_restart_on_a_full_disk_leaves_the_run_as_it_was(runs_dir, monkeypatch):
    run = make_run(runs_dir, {"algo": "DQN", "dqn": {"buffer_size": 100_000}})
    (run / "metrics.jsonl").write_text(json.dumps({"kind": "attempt", "t": 1.0, "step": 0, "attempt": 1}) + "\n")
    status = read_status(run)
    (run / "status.json").write_text(json.dumps({**status.to_json(), "state": "failed", "attempt": 1}))
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: SimpleNamespace(free=1_000, total=10**9, used=0))
    with pytest.raises(StartError, match="not enough free disk space"):
        restart_run(run)
    assert read_status(run).state == "failed" and read_status(run).attempt == 1
    assert not (run / "metrics.superseded.jsonl").exists() and (run / "metrics.jsonl").read_text()


def test_a_baseline_needs_no_disk_check(runs_dir, monkeypatch):
    cfg = validate_config(lean({"algo": "random", "budget": {"episodes": 2}})).config
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda p: SimpleNamespace(free=1_000, total=10**9, used=0))
    started = start_run(RunStore(runs_dir), cfg, reap=False)
    assert started.process.wait(240) == 0, (started.run_dir / "worker.log").read_text()
    assert read_status(started.run_dir).state == "finished"
