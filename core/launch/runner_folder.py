"""A detached runner's folder under a runs folder: the queue's ``<runs>/.queue``, a sweep's ``<runs>/.sweeps/NAME``.

Both runners are started the same way (detached, their output in ``runner.log``), hold the same
kind of lock while they live (``worker.lock``: an OS lock, which names no holder, so the runner
records its pid and start time in ``state.json`` once it holds it) and are read the same way: a
state that says active while its runner is gone reads ``crashed`` (a reading, never written).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from core.run.lock import RunLock
from core.util.files import read_json, write_json_atomic
from core.util.paths import absolute
from core.util.procs import is_alive, spawn_detached

RUNNER_START_GRACE_S = 60.0  # a runner launched this long ago may not have taken its lock and said its pid yet


class RunnerFolder:
    """The files every runner's folder has: ``state.json``, ``runner.log``, ``start.lock`` and the runner's lock."""

    __slots__ = ("path", "runs_dir")

    def __init__(self, runs_dir: Path | str, *parts: str):
        self.runs_dir = absolute(runs_dir)  # handed to a detached runner, which starts in another folder
        self.path = self.runs_dir.joinpath(*parts)

    @property
    def state(self) -> Path:
        return self.path / "state.json"

    @property
    def runner_log(self) -> Path:
        return self.path / "runner.log"

    @property
    def start_lock(self) -> Path:
        """Held for a moment by whoever starts the runner (``core.util.locks``): two starts never race."""
        return self.path / "start.lock"

    def lock(self) -> RunLock:
        """Held by the runner while it lives."""
        return RunLock(self.path)

    def load_state(self) -> dict[str, Any] | None:
        """The state as stored (None before a runner was started here)."""
        stored = read_json(self.state, default=None)
        return stored if isinstance(stored, dict) else None

    def write_state(self, state: dict[str, Any]) -> None:
        state["updated_at"] = time.time()
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.state, state)

    def read_state(self, active: tuple[str, ...]) -> dict[str, Any] | None:
        """The state as a reader sees it: ``crashed`` when it says one of ``active`` and its runner is gone."""
        state = self.load_state()
        if state and state.get("state") in active and not runner_alive(state):
            state = {**state, "state": "crashed", "recorded_state": state["state"]}
        return state

    def launch_runner(self, module: str, *args: str, reap: bool = True) -> subprocess.Popen[bytes]:
        """``python -m MODULE ARGS`` detached, its output in ``runner.log``."""
        self.path.mkdir(parents=True, exist_ok=True)
        return spawn_detached([sys.executable, "-m", module, *args], self.runner_log, reap=reap)


def runner_alive(state: dict[str, Any]) -> bool:
    """Whether the state's runner lives (or was launched moments ago and has not said so yet)."""
    runner = state.get("runner") or {}
    if is_alive(runner.get("pid"), runner.get("pid_create_time")):
        return True
    return not runner and time.time() - float(state.get("launched_at") or 0) < RUNNER_START_GRACE_S
