"""Envs for the agent tools' fault tests, importable by the env processes (never the test module itself)."""

from __future__ import annotations

import time

from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class StuckCartPole(CartPoleEnv):
    """CartPole (the trained policy's spaces) whose step ``at`` of each episode does not come back for an hour, in
    whichever process it runs: a simulator whose call never returns."""

    def __init__(self, at: int = 3, render_mode: str | None = None):
        super().__init__(render_mode=render_mode)
        self.at, self.count = at, 0

    def reset(self, *, seed=None, options=None):
        self.count = 0
        return super().reset(seed=seed, options=options)

    def step(self, action):
        self.count += 1
        if self.count == self.at:
            time.sleep(3600)
        return super().step(action)
