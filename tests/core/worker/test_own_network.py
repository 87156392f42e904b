"""Issue 30: a run with the user's own network (a features extractor and a policy class from the user's folder)
trains, resumes from another folder, evaluates, is measured exactly, and an export that cannot trace it says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.config.trust import trust
from core.estimate.measured import measure_network
from core.run.store import load_run_config
from core.util.files import read_json
from tests.conftest import REPO
from tests.training_helpers import lean_args

NET_MODULE = '''
"""An own network from the user's folder: a two-branch extractor and an actor-critic with one more parameter."""
import torch as th
from torch import nn
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor


class Twin(BaseFeaturesExtractor):
    def __init__(self, observation_space, width=8):
        super().__init__(observation_space, features_dim=2 * width)
        n = observation_space.shape[0]
        self.a, self.b = nn.Linear(n, width), nn.Linear(n, width)

    def forward(self, obs):
        if th.jit.is_tracing():
            raise RuntimeError("Twin keeps a Python-side cache and cannot be traced")
        return th.cat([th.tanh(self.a(obs)), th.relu(self.b(obs))], dim=1)


class OffsetPolicy(ActorCriticPolicy):
    def _build(self, lr_schedule):
        self.value_offset = nn.Parameter(th.zeros(1))  # before the optimizer is made: it trains too
        super()._build(lr_schedule)

    def predict_values(self, obs):
        return super().predict_values(obs) + self.value_offset
'''
OWN = ("--set", "policy.features_extractor=my_net:Twin", "--set", "policy.features_extractor_kwargs.width=6",
       "--set", "policy.class=my_net:OffsetPolicy")


def rlpanel(*args: str, cwd, home) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *lean_args(args)], capture_output=True, text=True, timeout=400,
                          cwd=cwd, env={**os.environ, "RLPANEL_HOME": str(home)})


@pytest.fixture(scope="module")
def own_run(tmp_path_factory):
    """One finished PPO run on CartPole with the user's own extractor and policy class, trained from the user's folder."""
    root = tmp_path_factory.mktemp("own_network")
    project, home = root / "my project", root / "home"
    project.mkdir()
    home.mkdir()
    (project / "my_net.py").write_text(NET_MODULE)
    done = rlpanel("train", "--algo", "PPO", "--env", "CartPole-v1", *OWN, "--trust", "my_net", "--timesteps", "256",
                   "--set", "ppo.n_steps=64", "--set", "ppo.batch_size=64", "--set", "ppo.n_epochs=2",
                   "--set", "runtime.n_envs=2", "--set", "budget.checkpoint_every=128", "--runs-dir", str(home / "runs"),
                   "--json", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"] == "finished", result
    return home, project, result["id"]


@pytest.mark.training
def test_own_network_trains_evaluates_and_resumes_from_another_folder(own_run):
    home, project, run_id = own_run
    run = home / "runs" / run_id
    cfg = load_run_config(run)
    assert cfg.env.path == str(project)  # recorded for the resume, although the env is a gymnasium id
    assert (cfg.policy.features_extractor, cfg.policy.policy_class) == ("my_net:Twin", "my_net:OffsetPolicy")
    assert cfg.policy.features_extractor_kwargs == {"width": 6}
    # from the repository (another folder): the checkpoint's classes are imported from the run's folder
    evaluated = rlpanel("evaluate", run_id, "--episodes", "2", "--runs-dir", str(home / "runs"), "--json", cwd=REPO, home=home)
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads(evaluated.stdout)["episodes"] == 2
    again = rlpanel("resume", run_id, "--timesteps", "128", "--runs-dir", str(home / "runs"), "--json", cwd=REPO, home=home)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["state"] == "finished"
    assert read_json(run / "summary.json")["timesteps"] >= 384


@pytest.mark.training
def test_measured_parameters_are_the_trained_models(own_run, monkeypatch):
    home, project, run_id = own_run
    cfg = load_run_config(home / "runs" / run_id)
    from stable_baselines3 import PPO

    monkeypatch.syspath_prepend(str(project))
    model = PPO.load(str(sorted((home / "runs" / run_id).rglob("*.zip"))[0]), device="cpu")
    assert type(model.policy).__name__ == "OffsetPolicy" and type(model.policy.features_extractor).__name__ == "Twin"
    trust("my_net")
    measured = measure_network(cfg)  # a child process, from the run's import folder
    assert measured.params == sum(p.numel() for p in model.policy.parameters())
    assert measured.error == "" and measured.activation_bytes > 0


@pytest.mark.training
def test_export_that_cannot_trace_names_the_network(own_run):
    home, _, run_id = own_run
    done = rlpanel("export-policy", run_id, "--format", "torchscript", "--runs-dir", str(home / "runs"), "--json",
                   cwd=REPO, home=home)
    assert done.returncode != 0
    assert "your network my_net.Twin" in done.stderr + done.stdout and "cannot be traced" in done.stderr + done.stdout


@pytest.mark.training
def test_graph_attention_preset_trains(tmp_path, runs_dir, user_home):
    """The shipped example: the graph env and its attention network, both trusted, trained from any folder."""
    done = rlpanel("train", "--preset", "graph-attention", "--trust", "examples.graph_env.env", "--trust",
                   "examples.graph_env.network", "--timesteps", "128", "--set", "ppo.n_steps=32", "--set", "ppo.batch_size=32",
                   "--set", "ppo.n_epochs=1", "--set", "runtime.n_envs=2", "--runs-dir", str(runs_dir), "--json",
                   cwd=tmp_path, home=user_home)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"] == "finished", result
    assert read_json(runs_dir / result["id"] / "summary.json")["timesteps"] >= 128
