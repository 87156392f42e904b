"""A tiny building-like env that reports its own measures in ``info`` at an episode's end.

Each of 20 steps the agent heats (action 1) or not (0): heating costs CO2 and keeps comfort,
the reward is comfort minus CO2. At the end, ``info`` holds ``co2_kg`` and ``comfort_pct`` (the
measures ``env.info_keys`` records) and ``label`` (text: never a measure).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

STEPS = 20


class InfoKeysEnv(gym.Env):
    def __init__(self, co2_per_heat: float = 0.5):
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.co2_per_heat = co2_per_heat
        self.t = self.heat = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = self.heat = 0
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.t += 1
        self.heat += int(action)
        reward = 0.2 * int(action) - self.co2_per_heat * int(action) + 0.1
        done = self.t >= STEPS
        info = {}
        if done:
            info = {"co2_kg": self.co2_per_heat * self.heat, "comfort_pct": 100.0 * self.heat / STEPS, "label": "room"}
        obs = np.array([self.t / STEPS, self.heat / STEPS], dtype=np.float32)
        return obs, reward, False, done, info
