"""Small image envs for the CNN estimate tests: SB3 builds a NatureCNN for them."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class TinyImageEnv(gym.Env):
    """A 40x44 RGB (channels last unless ``channels_first``) image; discrete or Box actions; 20-step episodes."""

    def __init__(self, channels_first: bool = False, continuous: bool = False, channels: int = 3):
        shape = (channels, 40, 44) if channels_first else (40, 44, channels)
        self.observation_space = gym.spaces.Box(0, 255, shape, dtype=np.uint8)
        self.action_space = gym.spaces.Box(-1, 1, (2,), np.float32) if continuous else gym.spaces.Discrete(3)
        self._t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self._t += 1
        return self.observation_space.sample(), float(self.np_random.random()), False, self._t >= 20, {}
