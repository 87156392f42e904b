"""A CPU-bound env like the users' HTTP-backed one: CartPole that waits ``delay_s`` (3 ms) in every step.

Registered with gymnasium as ``rlpanel/SleepyCartPole-v1`` when this module is imported
(``gym.make("bench.envs.sleepy:rlpanel/SleepyCartPole-v1")`` imports it); rlpanel configs name
the class as an entry point: ``env: {entry_point: "bench.envs.sleepy:SleepyCartPole"}``.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

ENV_ID = "rlpanel/SleepyCartPole-v1"


class SleepyCartPole(CartPoleEnv):
    """CartPole-v1 (500 steps at most) whose ``step`` first waits ``delay_s``: a remote simulator's round trip."""

    def __init__(self, delay_s: float = 0.003, **kwargs: Any):
        super().__init__(**kwargs)
        self.delay_s = delay_s
        self._steps = 0

    def reset(self, **kwargs: Any) -> Any:
        self._steps = 0
        return super().reset(**kwargs)

    def step(self, action: Any) -> Any:
        time.sleep(self.delay_s)
        obs, reward, terminated, truncated, info = super().step(action)
        self._steps += 1
        return obs, reward, terminated, truncated or self._steps >= 500, info


if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point="bench.envs.sleepy:SleepyCartPole", max_episode_steps=500)
