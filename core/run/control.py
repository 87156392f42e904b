"""Start, stop and resume workers as detached processes (ARCHITECTURE.md, "Processes").

A worker outlives whoever started it: a new session on POSIX, a new process group with no
console window on Windows. Stopping asks through the STOP file first (no POSIX signals, so the
same path works on Windows), then terminates the whole process tree and records that.
"""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from core.config.dotted import set_path
from core.config.validate import validate_config
from core.run.layout import RunDir
from core.run.states import ACTIVE, RESUMABLE
from core.run.status import read_status, write_status
from core.run.store import latest_checkpoint, load_run_config
from core.util.files import write_atomic
from core.util.procs import spawn_detached, terminate_tree
from core.util.yaml_reader import read_yaml_mapping

WORKER_MODULE = "core.training.worker"


def worker_command(run_dir: Path, resume: bool = False, python: str | None = None) -> list[str]:
    cmd = [python or sys.executable, "-m", WORKER_MODULE, str(run_dir)]
    return cmd + ["--resume"] if resume else cmd


def request_stop(run_dir: Path, reason: str = "requested") -> None:
    """Ask the worker for a graceful stop (it checks about once a second)."""
    write_atomic(RunDir(run_dir).stop_request, f"{reason} at {datetime.now().isoformat(timespec='seconds')}\n")


def launch_worker(run_dir: Path, resume: bool = False, extra_env: dict[str, str] | None = None,
                  reap: bool = True) -> subprocess.Popen[bytes]:
    """Start the worker for ``run_dir`` detached; its output goes to ``worker.log``."""
    run_dir = Path(run_dir)
    write_status(run_dir, state="starting", pid=None, pid_create_time=None, error=None, launched_at=time.time())
    return spawn_detached(worker_command(run_dir, resume), RunDir(run_dir).worker_log, extra_env, reap)


class ResumeError(ValueError):
    """A run that cannot be resumed, with the reason and what to do instead."""


def resume_run(run_dir: Path, more_steps: int | None = None, reap: bool = True) -> tuple[int, int]:
    """Continue a stopped, crashed or failed run (or a finished one, given ``more_steps``).

    Returns ``(checkpoint step, new total)``. ``more_steps`` extends the budget to the
    checkpoint's step plus that many; without it the run goes on to its configured total.
    """
    run_dir = Path(run_dir)
    layout = RunDir(run_dir)
    state = read_status(run_dir).get("state")
    if state not in RESUMABLE and not (state == "finished" and more_steps):
        hint = "; give more steps to train it further" if state == "finished" else ""
        raise ResumeError(f"run {run_dir.name} is {state}; only stopped, crashed or failed runs resume{hint}")
    ckpt = latest_checkpoint(run_dir)
    if ckpt is None:
        raise ResumeError(f"run {run_dir.name} has no checkpoint to resume from; start it again with: "
                          f"rlpanel train --config {layout.config}")
    step = int(ckpt["step"])
    if more_steps:
        raw = set_path(read_yaml_mapping(layout.config), "budget.total_timesteps", step + more_steps)
        write_atomic(layout.config, validate_config(raw, source=str(layout.config)).config.to_yaml())
    total = load_run_config(run_dir).budget.total_timesteps
    launch_worker(run_dir, resume=True, reap=reap)
    return step, total


def stop_run(run_dir: Path, timeout: float = 60.0, poll: float = 0.2) -> str:
    """Stop a run: STOP file, wait up to ``timeout`` s, then kill its process tree.

    Returns ``"graceful"``, ``"terminated"`` or ``"not running"``.
    """
    run_dir = Path(run_dir)
    status = read_status(run_dir)
    if status.get("state") not in ACTIVE:
        return "not running"
    request_stop(run_dir)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = read_status(run_dir)
        if status.get("state") not in ACTIVE:
            return "graceful"
        time.sleep(poll)
    pid = status.get("pid")
    if pid:
        terminate_tree(pid)
    write_status(run_dir, state="stopped", ended_at=time.time(),
                 exit_reason=f"terminated: no graceful stop within {timeout:g} s; resumes from the last checkpoint")
    return "terminated"
