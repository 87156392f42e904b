"""A custom env in the user's own folder trains from that folder, and resumes from anywhere."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.run.store import load_run_config
from core.util.files import read_json
from tests.conftest import REPO
from tests.training_helpers import lean_args

ENV_MODULE = '''
from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class ShortCartPole(CartPoleEnv):
    """CartPole from the user's own folder (not importable from anywhere else)."""
'''


def rlpanel(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *lean_args(args)], capture_output=True, text=True, timeout=400,
                          cwd=cwd)


@pytest.mark.training
def test_custom_env_trains_from_the_launch_folder_and_resumes(tmp_path, runs_dir):
    project = tmp_path / "my project"
    project.mkdir()
    (project / "my_cartpole.py").write_text(ENV_MODULE)
    done = rlpanel("train", "--algo", "PPO", "--env", "my_cartpole:ShortCartPole", "--trust", "my_cartpole", "--timesteps", "512",
                   "--set", "ppo.n_steps=128", "--set", "ppo.batch_size=64", "--set", "runtime.n_envs=2",
                   "--set", "budget.checkpoint_every=256", "--runs-dir", str(runs_dir), "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"] == "finished", result
    run = runs_dir / result["id"]
    assert load_run_config(run).env.path == str(project)  # recorded for the resume
    # resumed from another folder (the repository): the worker still finds the module
    again = rlpanel("resume", result["id"], "--timesteps", "256", "--runs-dir", str(runs_dir), "--json", cwd=REPO)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["state"] == "finished"
    assert read_json(run / "summary.json")["timesteps"] >= 768
