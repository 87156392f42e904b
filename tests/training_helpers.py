"""Helpers for tests that really train: make a run, run or launch its worker, wait on it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from core.config.validate import validate_config
from core.run.status import read_status
from core.run.store import RunStore
from core.util.jsonl import read_jsonl
from tests.conftest import REPO


def make_run(runs_dir: Path, raw: dict) -> Path:
    base = {"budget": {"checkpoint_every": 1000}, "runtime": {"telemetry_hz": 5}}
    from core.config.dotted import merge

    return RunStore(runs_dir).create(validate_config(merge(base, raw)).config)


def run_worker(run_dir: Path, resume: bool = False, timeout: float = 240) -> int:
    """Launch the worker the way the GUI and CLI do (detached, output in worker.log) and wait."""
    from core.run.control import launch_worker

    return launch_worker(run_dir, resume=resume, reap=False).wait(timeout)


def cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def wait_for(predicate, timeout: float = 120, what: str = "condition", poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def wait_state(run_dir: Path, states: tuple[str, ...], timeout: float = 180) -> str:
    return wait_for(lambda: read_status(run_dir).get("state") in states and read_status(run_dir)["state"],
                    timeout, f"state in {states}")


def records(run_dir: Path, kind: str) -> list[dict]:
    return [r for r in read_jsonl(run_dir / "metrics.jsonl") if r.get("kind") == kind]


def last_step(run_dir: Path) -> int:
    return max((r["step"] for r in read_jsonl(run_dir / "metrics.jsonl") if r.get("kind") == "progress"), default=0)


# --- a real trained run, made once per session and copied into tests that corrupt or resume it ---

TEMPLATE_CONFIG = {"algo": "PPO", "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1}, "runtime": {"n_envs": 1},
                   "budget": {"total_timesteps": 1024, "checkpoint_every": 256, "keep_checkpoints": 3}}


def train_template(folder: Path) -> Path:
    """A finished PPO run on CartPole with three checkpoints kept (256-step spacing)."""
    run = make_run(folder, TEMPLATE_CONFIG)
    assert run_worker(run) == 0, (run / "worker.log").read_text()
    assert read_status(run)["state"] == "finished"
    return run


def copy_run(template: Path, runs_dir: Path, state: str | None = None) -> Path:
    """A copy of ``template`` in ``runs_dir`` (a run folder holds everything it needs); ``state``
    rewrites its recorded state (e.g. ``stopped``, as if a stop had ended it)."""
    import shutil

    from core.run.status import write_status

    runs_dir.mkdir(parents=True, exist_ok=True)
    target = runs_dir / template.name
    shutil.copytree(template, target)
    if state is not None:
        write_status(target, state=state)
    return target
