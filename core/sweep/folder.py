"""A sweep's files: ``<runs>/.sweeps/<name>/`` and its state (docs/sweeps.md).

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

from pathlib import Path
from typing import Any

import yaml

from core.launch.runner_folder import RunnerFolder
from core.util.files import write_atomic
from core.util.paths import absolute

SWEEP_ACTIVE = ("running", "stopping")


class SweepFolder(RunnerFolder):
    """Every file of one sweep in one place (the state, the log and the locks: ``RunnerFolder``)."""

    __slots__ = ("name",)

    def __init__(self, runs_dir: Path | str, name: str):
        super().__init__(runs_dir, ".sweeps", name)
        self.name = name

    @property
    def spec(self) -> Path:
        return self.path / "sweep.yaml"

    @property
    def database(self) -> Path:
        return self.path / "study.db"

    @property
    def stop_request(self) -> Path:
        return self.path / "STOP"

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
    return folder.load_state()


def write_state(folder: SweepFolder, state: dict[str, Any]) -> None:
    folder.write_state(state)


def read_state(folder: SweepFolder) -> dict[str, Any] | None:
    """The state as a reader sees it: ``crashed`` when it says running and its runner is gone."""
    return folder.read_state(SWEEP_ACTIVE)
