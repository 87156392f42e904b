"""A tiny env with invalid actions and an ``action_masks()`` method, for MaskablePPO; and the same env without it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class MaskedEnv(gym.Env):
    """Four actions; at each step only two are valid (which two alternates). A valid action pays 1,
    an invalid one raises: MaskablePPO must never take one. Episodes last 20 steps."""

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(0.0, 1.0, (2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(4)
        self.t = 0

    def action_masks(self) -> np.ndarray:
        even = self.t % 2 == 0
        return np.array([even, even, not even, not even])

    def _obs(self) -> np.ndarray:
        return np.array([self.t % 2, self.t / 20], dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        if not self.action_masks()[int(action)]:
            raise AssertionError(f"invalid action {action} at step {self.t}: the mask was ignored")
        self.t += 1
        return self._obs(), 1.0, False, self.t >= 20, {}


class UnmaskedEnv(gym.Env):
    """Discrete actions and no action_masks(): MaskablePPO is refused on it."""

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(0.0, 1.0, (2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(4)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        return np.zeros(2, dtype=np.float32), 0.0, False, True, {}
