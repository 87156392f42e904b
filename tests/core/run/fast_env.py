"""An env whose episodes last ``STEPS`` steps (2 by default): hundreds of episodes a second, the
case that made ``metrics.jsonl`` grow without bound. Each episode's reward is a number the agent's
actions decide (so episodes differ) and ``info`` holds a measure, ``moves``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class FastEpisodesEnv(gym.Env):
    def __init__(self, steps: int = 2):
        self.observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(3)
        self.steps = steps
        self.t = self.moves = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = self.moves = 0
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        self.t += 1
        self.moves += int(action)
        done = self.t >= self.steps
        info = {"moves": float(self.moves)} if done else {}
        return np.array([self.t / self.steps], dtype=np.float32), float(action) - 0.5, False, done, info
