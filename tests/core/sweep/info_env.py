"""A tiny env that reports a measure in its info: how far the agent ended from a target (smaller is better).

The agent moves left (0) or right (1) on a line for 20 steps; ``info["distance"]`` is |position - 5|
and ``info["reached"]`` whether it ended on the target. The reward is the negative distance.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class TargetEnv(gym.Env):
    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-25.0, 25.0, (1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.position = 0
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position, self.t = 0, 0
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        self.position += 1 if int(action) == 1 else -1
        self.t += 1
        distance = abs(self.position - 5)
        info = {"distance": np.float32(distance), "reached": np.bool_(distance == 0), "note": "text is left out"}
        return np.array([self.position], dtype=np.float32), -distance / 20, False, self.t >= 20, info
