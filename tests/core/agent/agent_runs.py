"""Copies of the session's trained CartPole run for the agent's tools, and one whose env draws no frames."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import yaml
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

from core.run.layout import RunDir
from tests.training_helpers import copy_run

NO_FRAMES_ENTRY = "tests.core.agent.agent_runs:NoFramesEnv"


class NoFramesEnv(gym.Env):
    """CartPole's spaces (so the trained policy loads) and no picture: it supports no render mode at all."""

    metadata = {"render_modes": []}

    def __init__(self, render_mode: str | None = None):
        self.render_mode = render_mode if render_mode in self.metadata["render_modes"] else None
        cartpole = CartPoleEnv()
        self.observation_space, self.action_space = cartpole.observation_space, cartpole.action_space

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(4, np.float32), {}

    def step(self, action):
        return np.zeros(4, np.float32), 1.0, False, True, {}

    def render(self):
        return None


def no_frames_copy(trained_run: Path, runs_dir: Path) -> Path:
    """A copy of the trained run whose config names ``NoFramesEnv`` instead of CartPole."""
    run = copy_run(trained_run, runs_dir)
    config = RunDir(run).config
    raw = yaml.safe_load(config.read_text())
    raw["env"].update({"id": None, "entry_point": NO_FRAMES_ENTRY})
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    return run
