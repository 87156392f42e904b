"""Envs for the lean vec env's tests: one that tells which heavy modules its process holds, ones that fail."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv

HEAVY = ("torch", "stable_baselines3", "sb3_contrib", "PySide6")


def heavy_modules() -> list[str]:
    return sorted(name for name in HEAVY if name in sys.modules)


class ProbeCartPole(CartPoleEnv):
    """CartPole that writes ``<report_dir>/<pid>.json`` with the heavy modules of its process when it is made."""

    def __init__(self, report_dir: str | None = None, **kwargs):
        super().__init__(**kwargs)
        if report_dir:
            Path(report_dir, f"{os.getpid()}.json").write_text(json.dumps({"heavy": heavy_modules()}), encoding="utf-8")

    def render(self):
        if self.render_mode != "rgb_array":
            return super().render()
        return np.full((4, 6, 3), int(abs(self.state[0]) * 1000) % 256, dtype=np.uint8)  # a picture of the state

    def loaded_modules(self) -> list[str]:
        return heavy_modules()


class FailingEnv(CartPoleEnv):
    """CartPole that raises (``mode="raise"``), exits (``"die"``) or is killed (``"kill"``) at step ``at``;
    ``mode="init"`` fails when made."""

    def __init__(self, mode: str = "raise", at: int = 3):
        if mode == "init":
            raise ValueError("FailingEnv refuses to be made")
        super().__init__()
        self.mode, self.at, self.count = mode, at, 0

    def step(self, action):
        self.count += 1
        if self.count >= self.at:
            if self.mode == "die":
                os._exit(7)
            if self.mode == "kill":  # what the out-of-memory killer does
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError(f"FailingEnv broke at step {self.count}")
        return super().step(action)



class HangingEnv(CartPoleEnv):
    """CartPole whose step ``at`` never answers in time: it sleeps ``seconds`` (``mode="sleep"``, a simulator's call
    that does not come back) or deadlocks on a lock it holds (``"deadlock"``). With ``once`` (a file path) only the
    first process to create that file hangs: the process that replaces it, and the other envs, step on. Only a lean
    env process (a multiprocessing child) hangs: the spaces probe of a launch, a plain subprocess, plays on."""

    def __init__(self, mode: str = "sleep", at: int = 3, seconds: float = 5.0, once: str | None = None):
        super().__init__()
        self.mode, self.at, self.seconds, self.once, self.count = mode, at, seconds, once, 0

    def _hangs_now(self) -> bool:
        if self.count != self.at or multiprocessing.parent_process() is None:
            return False
        if self.once is None:
            return True
        try:
            os.close(os.open(self.once, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return False
        return True

    def step(self, action):
        self.count += 1
        if self._hangs_now():
            if self.mode == "deadlock":
                lock = threading.Lock()
                lock.acquire()
                lock.acquire()  # never returns
            time.sleep(self.seconds)
        return super().step(action)
