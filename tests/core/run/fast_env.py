"""An env whose episodes last ``STEPS`` steps (2 by default): hundreds of episodes a second, the
case that made ``metrics.jsonl`` grow without bound. Each episode's reward is a number the agent's
actions decide (so episodes differ) and ``info`` holds a measure, ``moves``. ``delay_s``: each step
waits that long first; with ``slow_while`` (a file's path), only while that file exists, so a test can let a
stopped run's resume go at full speed."""

from __future__ import annotations

import os
import time

import gymnasium as gym
import numpy as np


class FastEpisodesEnv(gym.Env):
    def __init__(self, steps: int = 2, delay_s: float = 0.0, slow_while: str = ""):
        self.observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(3)
        self.steps, self.delay_s, self.slow_while = steps, delay_s, slow_while
        self.t = self.moves = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = self.moves = 0
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        if self.delay_s and (not self.slow_while or os.path.exists(self.slow_while)):
            time.sleep(self.delay_s)  # a slow simulator: a rollout takes seconds
        self.t += 1
        self.moves += int(action)
        done = self.t >= self.steps
        info = {"moves": float(self.moves)} if done else {}
        return np.array([self.t / self.steps], dtype=np.float32), float(action) - 0.5, False, done, info
