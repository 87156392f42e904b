"""A tiny env that misbehaves the way a night does: it hangs on a step (for a while or for ever), kills the
process it runs in, or raises; each misdeed at a given step, once per marker file (so the resumed or replaced
env behaves), or every time without one."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np


def _first_time(marker: str | None) -> bool:
    """True once per marker file (it is created here); always True without one."""
    if marker is None:
        return True
    try:
        Path(marker).open("x", encoding="utf-8").close()
    except FileExistsError:
        return False
    return True


class NightEnv(gym.Env):
    """20-step episodes of a 2-float observation; ``hang_at``/``die_at``/``raise_at``: the step (counted in this
    process) of the misdeed; ``hang_s`` None hangs for ever (a deadlock: a lock taken twice); ``error``: what
    ``raise_at`` raises (a RuntimeError's message: a lost connection, a CUDA error)."""

    def __init__(self, hang_at: int | None = None, hang_s: float | None = None, die_at: int | None = None,
                 raise_at: int | None = None, marker: str | None = None,
                 error: str = "the simulator's connection was lost"):
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.hang_at, self.hang_s, self.die_at, self.raise_at, self.marker = hang_at, hang_s, die_at, raise_at, marker
        self.error = error
        self.steps = 0
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.steps += 1
        self.t += 1
        if self.steps == self.hang_at and _first_time(self.marker):
            if self.hang_s is None:
                lock = threading.Lock()
                lock.acquire()
                lock.acquire()  # a deadlock: never returns
            time.sleep(self.hang_s)
        if self.steps == self.die_at and _first_time(self.marker):
            os.kill(os.getpid(), signal.SIGKILL)
        if self.steps == self.raise_at and _first_time(self.marker):
            raise RuntimeError(self.error)
        obs = np.full(2, 0.1 if action else -0.1, dtype=np.float32)
        return obs, float(action), False, self.t >= 20, {}
