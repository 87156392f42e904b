"""Start and stop workers as detached processes (DESIGN.md "Processes").

A worker outlives whoever started it: a new session on POSIX, a new process group with no
console window on Windows. Stopping asks through the STOP file first (no POSIX signals, so the
same path works on Windows), then terminates the whole process tree and records that.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from core.runs import read_status, request_stop, write_status

# Windows process-creation flags (subprocess defines them only on Windows).
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_NO_WINDOW = 0x08000000


def detach_popen_kwargs(platform: str = sys.platform) -> dict:
    """``Popen`` arguments that detach a child from its parent's terminal on ``platform``."""
    if platform.startswith("win"):
        return {"creationflags": CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW}
    return {"start_new_session": True}


def effective_start_method(requested: str, platform: str = sys.platform) -> tuple[str, str | None]:
    """The multiprocessing start method that will be used, and a note when it differs."""
    if platform.startswith("win") and requested in ("forkserver", "fork"):
        return "spawn", f"start_method {requested} does not exist on Windows; using spawn"
    if platform == "darwin" and requested == "fork":
        return "spawn", "start_method fork is unsafe on macOS; using spawn"
    return requested, None


def worker_command(run_dir: Path, resume: bool = False, python: str | None = None) -> list[str]:
    cmd = [python or sys.executable, "-m", "core.training.worker", str(run_dir)]
    return cmd + ["--resume"] if resume else cmd


def spawn_detached(cmd: list[str], log_path: Path, extra_env: dict[str, str] | None = None,
                   reap: bool = True) -> subprocess.Popen:
    """Start ``cmd`` detached from this process, its output appended to ``log_path``.

    With ``reap`` a daemon thread waits for the child so it does not linger as a zombie while
    this process lives (a zombie would look alive to a pid check).
    """
    env = {**os.environ, **(extra_env or {}), "PYTHONUNBUFFERED": "1"}
    repo = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=repo,
                                close_fds=True, **detach_popen_kwargs())
    if reap:
        threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()
    return proc


def launch_worker(run_dir: Path, resume: bool = False, extra_env: dict[str, str] | None = None,
                  reap: bool = True) -> subprocess.Popen:
    """Start the worker for ``run_dir`` detached; its output goes to ``worker.log``."""
    run_dir = Path(run_dir)
    write_status(run_dir, state="starting", pid=None, pid_create_time=None, error=None, launched_at=time.time())
    return spawn_detached(worker_command(run_dir, resume), run_dir / "worker.log", extra_env, reap)


class ResumeError(ValueError):
    """A run that cannot be resumed, with the reason and what to do instead."""


def resume_run(run_dir: Path, more_steps: int | None = None, reap: bool = True) -> tuple[int, int]:
    """Continue a stopped, crashed or failed run (or a finished one, given ``more_steps``).

    Returns ``(checkpoint step, new total)``. ``more_steps`` extends the budget to the
    checkpoint's step plus that many; without it the run goes on to its configured total.
    """
    import yaml

    from core.config import set_path, validate_config
    from core.files import write_atomic
    from core.runs import RESUMABLE, latest_checkpoint, load_run_config

    run_dir = Path(run_dir)
    state = read_status(run_dir).get("state")
    if state not in RESUMABLE and not (state == "finished" and more_steps):
        hint = "; give more steps to train it further" if state == "finished" else ""
        raise ResumeError(f"run {run_dir.name} is {state}; only stopped, crashed or failed runs resume{hint}")
    ckpt = latest_checkpoint(run_dir)
    if ckpt is None:
        raise ResumeError(f"run {run_dir.name} has no checkpoint to resume from; start it again with: "
                          f"rlpanel train --config {run_dir / 'config.yaml'}")
    step = int(ckpt["step"])
    if more_steps:
        raw = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
        raw = set_path(raw, "budget.total_timesteps", step + more_steps)
        write_atomic(run_dir / "config.yaml", validate_config(raw, source=str(run_dir / "config.yaml")).config.to_yaml())
    total = load_run_config(run_dir).budget.total_timesteps
    launch_worker(run_dir, resume=True, reap=reap)
    return step, total


def launch_queue_runner(runs_dir: Path, reap: bool = True) -> subprocess.Popen:
    """Start the queue runner for ``runs_dir`` detached; its output goes to ``.queue/runner.log``."""
    folder = Path(runs_dir) / ".queue"
    folder.mkdir(parents=True, exist_ok=True)
    return spawn_detached([sys.executable, "-m", "core.queue_runner", str(runs_dir)], folder / "runner.log", reap=reap)


def process_tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def stop_run(run_dir: Path, timeout: float = 60.0, poll: float = 0.2) -> str:
    """Stop a run: STOP file, wait up to ``timeout`` s, then kill its process tree.

    Returns ``"graceful"``, ``"terminated"`` or ``"not running"``.
    """
    run_dir = Path(run_dir)
    status = read_status(run_dir)
    if status.get("state") not in ("queued", "starting", "running", "stopping"):
        return "not running"
    request_stop(run_dir)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = read_status(run_dir)
        if status.get("state") not in ("queued", "starting", "running", "stopping"):
            return "graceful"
        time.sleep(poll)
    pid = status.get("pid")
    procs = process_tree(pid) if pid else []
    for proc in procs:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=5)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=5)
    write_status(run_dir, state="stopped", ended_at=time.time(),
                 exit_reason=f"terminated: no graceful stop within {timeout:g} s; resumes from the last checkpoint")
    return "terminated"
