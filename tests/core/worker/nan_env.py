"""A tiny env whose rewards turn NaN after ``clean_steps`` steps: training on it diverges."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class NanRewardEnv(gym.Env):
    def __init__(self, clean_steps: int = 100):
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.clean_steps = clean_steps
        self.steps = 0
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.steps += 1
        self.t += 1
        reward = float("nan") if self.steps > self.clean_steps else 1.0
        return np.full(2, 0.1, dtype=np.float32), reward, False, self.t >= 20, {}
