"""A sweep's files: ``<runs>/.sweeps/<name>/`` and its state (ARCHITECTURE.md, "Sweeps").

```
sweep.yaml     the sweep as started (the runner and a resume read it back)
study.db       the Optuna storage (SQLite): optuna.load_study and optuna-dashboard open it as it is
study.lock     held by whoever opens the storage (a new file gets its tables then: one at a time)
state.json     state (running | stopping | stopped | finished | failed), the runner's pid and start
               time; ``crashed`` is a reading (the runner is gone), never written
STOP           asks the runner to stop: no more trials, running ones stop gracefully (resumable)
runner.log     the runner's output
worker.lock    held by the runner while it lives (an OS lock); start.lock: held by a start
```
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

from core.run.lock import RunLock
from core.util.files import read_json, write_atomic, write_json_atomic
from core.util.paths import absolute
from core.util.procs import is_alive

SWEEP_ACTIVE = ("running", "stopping")
RUNNER_START_GRACE_S = 60.0


class SweepFolder:
    """Every file of one sweep in one place."""

    __slots__ = ("path", "runs_dir", "name")

    def __init__(self, runs_dir: Path | str, name: str):
        self.runs_dir = absolute(runs_dir)
        self.name = name
        self.path = self.runs_dir / ".sweeps" / name

    @property
    def spec(self) -> Path:
        return self.path / "sweep.yaml"

    @property
    def database(self) -> Path:
        return self.path / "study.db"

    @property
    def state(self) -> Path:
        return self.path / "state.json"

    @property
    def stop_request(self) -> Path:
        return self.path / "STOP"

    @property
    def runner_log(self) -> Path:
        return self.path / "runner.log"

    @property
    def start_lock(self) -> Path:
        return self.path / "start.lock"

    def lock(self) -> RunLock:
        return RunLock(self.path)

    def local_storage(self) -> str:
        """The SQLite URL of the study file, as ``optuna.load_study(storage=...)`` takes it."""
        return f"sqlite:///{self.database.as_posix()}"


def sweep_names(runs_dir: Path) -> list[str]:
    """The sweeps of a runs folder, by name."""
    root = absolute(runs_dir) / ".sweeps"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "sweep.yaml").is_file())


def save_spec_data(folder: SweepFolder, data: dict[str, Any]) -> None:
    folder.path.mkdir(parents=True, exist_ok=True)
    write_atomic(folder.spec, yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=110))


def load_state(folder: SweepFolder) -> dict[str, Any] | None:
    """The state as stored (None before the sweep was started)."""
    stored = read_json(folder.state, default=None)
    return stored if isinstance(stored, dict) else None


def write_state(folder: SweepFolder, state: dict[str, Any]) -> None:
    state["updated_at"] = time.time()
    folder.path.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder.state, state)


def runner_alive(state: dict[str, Any]) -> bool:
    """Whether the sweep's runner lives (or was launched moments ago and has not said so yet)."""
    runner = state.get("runner") or {}
    if is_alive(runner.get("pid"), runner.get("pid_create_time")):
        return True
    return not runner and time.time() - float(state.get("launched_at") or 0) < RUNNER_START_GRACE_S


def read_state(folder: SweepFolder) -> dict[str, Any] | None:
    """The state as a reader sees it: ``crashed`` when it says running and its runner is gone."""
    state = load_state(folder)
    if state and state.get("state") in SWEEP_ACTIVE and not runner_alive(state):
        state = {**state, "state": "crashed", "recorded_state": state["state"]}
    return state
