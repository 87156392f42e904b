"""Launch, stop, resume and delete runs (docs/processes.md); a new run and a restart start in core.launch.start.

A worker outlives whoever started it: a new session on POSIX, a new process group with no
console window on Windows. Stopping asks through the STOP file first (no POSIX signals, so the
same path works on Windows), then sends SIGTERM (a graceful stop too, on POSIX), then kills the
whole process tree and records that, naming the checkpoint it will resume from. Resume needs a
checkpoint; a run without one is restarted (``core.launch.start.restart_run``): the same config from
step 0, the old curve kept as superseded. Delete moves a run folder to the system's trash.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from core.config.errors import ConfigError
from core.config.validate import validate_config
from core.run.checkpoints import find_checkpoint
from core.run.layout import RunDir
from core.run.reached import resume_by_hand
from core.run.states import ACTIVE, BROKEN, RESUMABLE
from core.run.status import SUPERVISOR_MODULE, WORKER_MODULE, RunStatus, StatusFields, read_status, write_status
from core.run.store import load_run_config
from core.util.files import write_atomic
from core.util.locks import held_briefly
from core.util.paths import CODE_ROOT, absolute
from core.util.procs import CREATE_NO_WINDOW, spawn_detached, terminate_tree
from core.util.yaml_reader import read_yaml_mapping

# What a launch or a stop of a run on a Ray cluster runs: a child, not an import, so that the window never loads Ray
# (seconds, hundreds of MB) and a job API that does not answer is killed after CLUSTER_CALL_S.
CLUSTER_MODULE = "core.cluster.submit"
CLUSTER_CALL_S = 120.0  # a submission or a stop through the cluster's job API: longer means it is not answering


def worker_command(run_dir: Path, resume: bool = False, python: str | None = None) -> list[str]:
    """The worker's command line; the run folder absolute, since the worker starts in another folder."""
    cmd = [python or sys.executable, "-m", WORKER_MODULE, str(absolute(run_dir))]
    return cmd + ["--resume"] if resume else cmd


def supervisor_command(run_dir: Path, resume: bool = False, python: str | None = None) -> list[str]:
    """What ``launch_worker`` starts: the supervisor (``core.launch.supervisor``), which starts the
    worker as its child and reports its end, a death without a word included."""
    cmd = [python or sys.executable, "-m", SUPERVISOR_MODULE, str(absolute(run_dir))]
    return cmd + ["--resume"] if resume else cmd


class ClusterLaunchError(OSError):
    """A cluster run the Ray cluster did not take (the run is recorded ``failed`` with the reason)."""


def cluster_command(run_dir: Path, *flags: str) -> list[str]:
    """``python -m core.cluster.submit RUN_DIR`` + flags: a cluster run's submission (or ``--stop``)."""
    return [sys.executable, "-m", CLUSTER_MODULE, str(absolute(run_dir)), *flags]


def is_cluster_run(run_dir: Path) -> bool:
    """Whether the run's status names a Ray cluster (it launches, resumes and stops through Ray's job API)."""
    ray = read_status(run_dir).ray
    return bool(ray and ray.get("address"))


def _run_cluster_command(run_dir: Path, *flags: str, timeout: float = CLUSTER_CALL_S) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(CODE_ROOT), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    flags_win = CREATE_NO_WINDOW if sys.platform.startswith("win") else 0  # no console flashes up under the window
    proc = subprocess.Popen(cluster_command(run_dir, *flags), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=str(CODE_ROOT), creationflags=flags_win)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        message = f"the Ray cluster did not answer within {timeout:g} s; check it with: rlpanel doctor --ray ADDRESS"
        if not flags or flags == ("--resume",):
            write_status(run_dir, state="failed", ended_at=time.time(), error={"message": message},
                         exit_reason=f"not submitted to the cluster: {message}")
        raise ClusterLaunchError(message) from None
    if proc.returncode:
        lines = [line for line in err.decode(errors="replace").splitlines() if line.strip()]
        raise ClusterLaunchError(lines[-1] if lines else f"{CLUSTER_MODULE} exited with code {proc.returncode}")
    return proc


def request_stop(run_dir: Path, reason: str = "requested") -> None:
    """Ask the worker for a graceful stop (it checks about once a second, from its first step on)."""
    write_atomic(RunDir(run_dir).stop_request, f"{reason} at {datetime.now().isoformat(timespec='seconds')}\n")


def launch_worker(run_dir: Path, resume: bool = False, extra_env: dict[str, str] | None = None,
                  reap: bool = True, notes: list[str] | None = None,
                  also: StatusFields | None = None) -> subprocess.Popen[bytes]:
    """Start the worker for ``run_dir`` detached, under its supervisor; their output goes to ``worker.log``.

    The process returned is the supervisor's: it ends after the worker, with the worker's exit
    code (128 + the signal's number when a signal ended it); status.json names the worker's pid.

    A STOP left from an earlier attempt is removed here, before the launch, so a stop asked for
    while this attempt is ``starting`` is still there when the worker looks (point 9 of issue 11).
    A custom env's import folder (``env.path`` in the run's config) is the worker's working
    folder and on its path, for a resume too. ``notes`` receives what the window should say
    (a refused breakaway on Windows). ``also``: status fields written in the same write as ``starting``.

    A run whose status names a Ray cluster (``ray``) is submitted to it instead (through
    ``core.cluster.submit``; the process returned is that submission, ended); a submission the
    cluster did not take raises ``ClusterLaunchError`` and leaves the run ``failed`` with the reason.
    """
    run_dir = Path(run_dir)
    RunDir(run_dir).stop_request.unlink(missing_ok=True)
    folder = import_folder(run_dir)
    # a resume records the state it continues from here, before "starting" hides it (the morning report says
    # "resumed after it was stopped")
    starting: StatusFields = {"state": "starting", "pid": None, "pid_create_time": None, "error": None,
                              "launched_at": time.time()}
    if resume:
        starting["resumed_from"] = read_status(run_dir).state
    starting.update(also or {})
    write_status(run_dir, **starting)
    if is_cluster_run(run_dir):
        return _run_cluster_command(run_dir, *(["--resume"] if resume else []))
    return spawn_detached(supervisor_command(run_dir, resume), RunDir(run_dir).worker_log, extra_env, reap,
                          folder=folder, notes=notes)


def import_folder(run_dir: Path) -> str | None:
    """``env.path`` of the run's config when it names a folder that exists (else the worker says what fails)."""
    env = read_yaml_mapping(RunDir(run_dir).config).get("env")
    path = env.get("path") if isinstance(env, dict) else None
    return str(path) if path and Path(str(path)).is_dir() else None


class RunStateError(ValueError):
    """A run that cannot be resumed, restarted or deleted as it is, with the reason and what to do instead."""


class ResumeError(RunStateError):
    """A run that cannot be resumed."""


def resume_run(run_dir: Path, more_steps: int | None = None, reap: bool = True,
               claim: Callable[[RunStatus], StatusFields] | None = None) -> tuple[int, int]:
    """Continue a stopped, crashed or failed run (or a finished one, given ``more_steps``).

    Returns ``(checkpoint step, new total)``. ``more_steps`` extends the budget to the
    checkpoint's step plus that many; without it the run goes on to its configured total. The
    checkpoint is the newest complete one (``core.run.checkpoints``). Two resumes at once are
    serialised: the second finds the run ``starting`` and is refused. ``claim`` (an automatic resume's) is
    called under the lock with the status read there; what it returns is written with ``starting``, and what it
    raises refuses the resume.
    """
    run_dir = Path(run_dir)
    layout = RunDir(run_dir)
    if more_steps is not None and (isinstance(more_steps, bool) or not isinstance(more_steps, int) or more_steps < 1):
        raise ResumeError(f"more steps must be a whole number of at least 1, not {more_steps!r}: e.g. --timesteps 10000")
    with held_briefly(layout.control_lock, what=f"run {run_dir.name}"):
        status = read_status(run_dir)
        state = status.state
        if state == BROKEN:
            raise ResumeError(f"run {run_dir.name} cannot be read ({status.broken}); it cannot be resumed")
        if state not in RESUMABLE and not (state == "finished" and more_steps):
            hint = "; give more steps to train it further" if state == "finished" else ""
            raise ResumeError(f"run {run_dir.name} is {state}; only stopped, crashed or failed runs resume{hint}")
        also = claim(status) if claim is not None else None
        try:
            cfg = load_run_config(run_dir)
        except ConfigError as exc:
            raise ResumeError(f"run {run_dir.name} cannot be resumed: {exc}") from None
        if cfg.is_baseline:  # a baseline keeps no checkpoint: it plays its episodes again
            launch_worker(run_dir, resume=True, reap=reap, also=also)
            return 0, cfg.budget.episodes
        choice = find_checkpoint(run_dir)
        if choice.checkpoint is None:
            why = f" ({choice.note})" if choice.skipped else ""
            raise ResumeError(f"run {run_dir.name} has no complete checkpoint to resume from{why}; restart it from step 0 "
                              f"with: rlpanel restart {run_dir.name}")
        step = choice.checkpoint.step
        total = cfg.budget.total_timesteps
        if more_steps:
            total = step + more_steps
            raw = cfg.model_dump(mode="json")
            raw["budget"]["total_timesteps"] = total
            write_atomic(layout.config, validate_config(raw, source=str(layout.config)).config.to_yaml())
        launch_worker(run_dir, resume=True, reap=reap, also=also)
    return step, total


def stop_run(run_dir: Path, timeout: float = 60.0, poll: float = 0.2, term_grace_s: float = 15.0) -> str:
    """Stop a run: STOP file, wait up to ``timeout`` s; then SIGTERM (which the worker also takes as
    a graceful stop), up to ``term_grace_s`` more; then kill its process tree and record that.

    Returns ``"graceful"`` (the worker ended the run itself), ``"terminated"`` or ``"not running"``.
    A run on a Ray cluster is not a process here: past the STOP wait its job is stopped through Ray.
    """
    run_dir = Path(run_dir)
    if read_status(run_dir).state not in ACTIVE:
        return "not running"
    request_stop(run_dir)
    if _wait_until_ended(run_dir, timeout, poll):
        return "graceful"
    pid = read_status(run_dir).pid
    if is_cluster_run(run_dir):  # Ray's stop: SIGTERM to the job's processes (a graceful stop), SIGKILL later
        try:
            _run_cluster_command(run_dir, "--stop")
        except ClusterLaunchError as exc:
            raise RunStateError(f"run {run_dir.name} did not stop through STOP within {timeout:g} s and its Ray job "
                                f"could not be stopped: {exc}") from None
        _wait_until_ended(run_dir, term_grace_s, poll)
    elif pid:
        terminate_tree(pid, grace_s=term_grace_s, root_first=True)
    after = read_status(run_dir)
    if after.state not in ACTIVE and after.recorded_state is None:
        return "graceful"  # it saved and wrote its own end after SIGTERM
    write_status(run_dir, state="stopped", ended_at=time.time(),
                 exit_reason=f"terminated: no graceful stop within {timeout:g} s; {resume_by_hand(run_dir)}")
    return "terminated"


def _wait_until_ended(run_dir: Path, timeout: float, poll: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if read_status(run_dir).state not in ACTIVE:
            return True
        time.sleep(poll)
    return False


def delete_run(run_dir: Path) -> None:
    """Move an ended run's folder to the system's trash (the user can restore it from there)."""
    from send2trash import send2trash

    run_dir = Path(run_dir)
    state = read_status(run_dir).state
    if state in ACTIVE:
        raise RunStateError(f"run {run_dir.name} is {state}; stop it first (rlpanel stop {run_dir.name}), then delete it")
    if not RunDir(run_dir).config.is_file():
        raise RunStateError(f"{run_dir} is not a run folder (no config.yaml); nothing was deleted")
    send2trash(str(run_dir))
