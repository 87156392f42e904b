"""Issue 44, item 7: a queue's jobs import a custom env from the folder the queue was started in, as ``rlpanel
train`` does (``ModuleNotFoundError`` before: the queue set no ``env.path``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from core.config.trust import trust
from core.queue.state import read_queue
from core.run.status import read_status
from core.run.store import load_run_config
from tests.core.queue.test_queue import plan_over
from tests.training_helpers import TEST_VEC_ENV, lean_args, wait_for

ENV_MODULE = '''
from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class QueueCartPole(CartPoleEnv):
    """CartPole importable only from the folder the queue was started in."""
'''


@pytest.mark.training
def test_a_queue_job_imports_its_custom_env_from_the_folder_the_queue_was_started_in(tmp_path, runs_dir):
    project = tmp_path / "my project"
    project.mkdir()
    (project / "queue_cartpole.py").write_text(ENV_MODULE)
    trust("queue_cartpole")
    plan = project / "plan.yaml"
    plan.write_text(yaml.safe_dump({"jobs": [{
        "name": "mine", "algo": "PPO", "env": "queue_cartpole:QueueCartPole", "timesteps": 256,
        "set": {"ppo.n_steps": 64, "ppo.batch_size": 32, "runtime.n_envs": 1, "runtime.vec_env": TEST_VEC_ENV,
                "budget.checkpoint_every": 128}}]}))
    started = subprocess.run([sys.executable, "-m", "core.cli", *lean_args(["queue", "run", "plan.yaml", "--runs-dir",
                                                                            str(runs_dir)])],
                             capture_output=True, text=True, timeout=240, cwd=project)
    assert started.returncode == 0, started.stderr
    assert read_queue(runs_dir).import_folder == str(project)
    ended = wait_for(lambda: plan_over(runs_dir), timeout=240, what="the queue to end")
    job = ended.job("mine")
    assert (ended.state, job.status) == ("finished", "finished"), job.reason
    run = runs_dir / job.run_id
    assert read_status(run).state == "finished"
    assert load_run_config(run).env.path == str(project), "recorded: a resume imports from there too"
