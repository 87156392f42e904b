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

# Tests that train do so through the lean env processes (``LeanSubprocVecEnv``, what ``vec_env: subproc`` gives a
# user), one process per env, unless a test is about another vec env and says so in its config. This is the one
# place that chooses it: ``make_run`` configs, ``cli("train", ...)``, queue plans (``lean_plan``) and the sweep
# files of ``tests/core/sweep/helpers.py`` take it from here. The schema's own default stays ``dummy``.
TEST_VEC_ENV = "subproc"


def lean(raw: dict) -> dict:
    """``raw`` with ``runtime.vec_env: TEST_VEC_ENV`` unless it names a vec env itself."""
    from core.config.dotted import merge

    return merge({"runtime": {"vec_env": TEST_VEC_ENV}}, raw)


def lean_args(args: list[str] | tuple[str, ...]) -> list[str]:
    """A ``train`` command line with ``--set runtime.vec_env=TEST_VEC_ENV`` added, unless it names a vec env, a
    ``--config`` file or a ``--preset`` (those say what they train with); other commands unchanged."""
    args = list(args)
    if args[:1] != ["train"] or any("vec_env" in a for a in args) or "--config" in args or "--preset" in args:
        return args
    return [*args, "--set", f"runtime.vec_env={TEST_VEC_ENV}"]


def lean_jobs(plan: dict) -> dict:
    """A queue plan's data whose every job without a vec env of its own trains with ``TEST_VEC_ENV``."""
    jobs = [{**job, "set": {"runtime.vec_env": TEST_VEC_ENV, **job.get("set", {})}} for job in plan.get("jobs", [])]
    return {**plan, "jobs": jobs}


def lean_plan(text: str) -> str:
    """``lean_jobs`` for a plan's YAML text."""
    import yaml

    return yaml.safe_dump(lean_jobs(yaml.safe_load(text)), sort_keys=False)


def make_run(runs_dir: Path, raw: dict) -> Path:
    base = lean({"budget": {"checkpoint_every": 1000}, "runtime": {"telemetry_hz": 5}})
    from core.config.dotted import merge

    return RunStore(runs_dir).create(validate_config(merge(base, raw)).config)


def run_worker(run_dir: Path, resume: bool = False, timeout: float = 240) -> int:
    """Launch the worker the way the GUI and CLI do (detached, output in worker.log) and wait."""
    from core.launch.control import launch_worker

    return launch_worker(run_dir, resume=resume, reap=False).wait(timeout)


def cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """``rlpanel ARGS`` as a child process (a ``train`` gets the tests' vec env: ``lean_args``)."""
    return subprocess.run([sys.executable, "-m", "core.cli", *lean_args(args)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def wait_for(predicate, timeout: float = 120, what: str = "condition", poll: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def wait_state(run_dir: Path, states: tuple[str, ...], timeout: float = 180) -> str:
    return wait_for(lambda: read_status(run_dir).state in states and read_status(run_dir).state,
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
    assert read_status(run).state == "finished"
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


# --- a real trained SBX (JAX) run, made once per session: the agent tools' and the window's tests share it ---

SBX_PPO_CONFIG = {"algo": "PPO", "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 2}, "policy": {"net_arch": [16]},
                  "runtime": {"engine": "sbx", "n_envs": 2, "seed": 3, "normalize": {"obs": True}},
                  "budget": {"total_timesteps": 1024, "checkpoint_every": 512, "eval_every": 512, "eval_episodes": 3}}


def train_sbx_template(folder: Path, raw: dict | None = None) -> Path:
    """A finished SBX run (PPO CartPole with VecNormalize, checkpoints at 512 and 1,024, a best one, unless ``raw``
    says another config)."""
    run = make_run(folder, raw or SBX_PPO_CONFIG)
    assert run_worker(run) == 0, (run / "worker.log").read_text()
    assert read_status(run).state == "finished", (run / "worker.log").read_text()[-3000:]
    return run
