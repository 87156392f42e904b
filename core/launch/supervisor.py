"""The supervisor: ``python -m core.launch.supervisor RUN_DIR [--resume]``, the small process that
``core.launch.control.launch_worker`` starts detached and that starts the worker as its own child.

It waits on the worker, so it learns of the worker's end the moment it happens, however it
happens. A worker that recorded its end (finished, stopped, failed) is reported as it recorded
it. A worker that died without a word (``kill -9``, the out-of-memory killer, a crash of Python
itself) is marked ``crashed`` here, with the reason (the signal or exit code, the step it got to,
and what follows: the automatic resume planned, or the command that resumes it), and reported.
Every notification of a run's end is sent from here, after the worker's process is gone: a slow
or unreachable service never keeps a run ``running``.

It stays out of the other paths: status.json names the worker's pid, so stop, kill-tree and
reattach act on the worker as before; a worker killed by ``rlpanel stop`` (a ``STOP`` file is
there) is left to the stop to record; a newer attempt (a resume that started after this worker
ended) or a second worker refused by the run's lock is never touched. The supervisor holds the
run's control lock only for its last check-and-write, and loads no torch (35 MB resident,
21 MB of its own, measured). If it dies with the worker (a power cut, a killed process group),
the next reader sees ``crashed`` as before (``core.run.status.read_status``); a queue runner
still running notifies that crash for its jobs.

A failed or crashed attempt of a run with automatic resume (``core.launch.auto_resume``, issue 28) is
planned here: the notification says when it resumes by itself or why it will not, and this
process waits out the back-off and resumes the run (its successor supervisor takes over).

It also keeps ``worker.log`` bounded over long nights: every ``LOG_CHECK_S`` it looks at the
log's size and past ``LOG_MAX_BYTES`` copies it to ``worker.log.1`` and empties it (the worker
and this process append to it, so their next lines land at the start of the emptied file); the
two files together never pass twice the bound. Lines written between the copy and the emptying
(milliseconds) are lost; a reader following the log (``TextTail``) notices the shrink.

A run whose config names trackers (``runtime.sync``) gets its sync as a second child (``core.sync.auto``), started
with the worker and waited for after the worker's end (its last pass), so the tracker import and a slow server
never sit in this process or in the training loop.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from core.launch import auto_resume
from core.launch.control import worker_command
from core.notify.run_events import notify_run_event
from core.run.layout import RunDir
from core.run.reached import step_reached
from core.run.states import FAILED, TERMINAL
from core.run.status import WORKER_MODULE, read_recorded_status, write_status
from core.sync.auto import WAIT_AT_END_S, start_sync
from core.util.console import utf8_env
from core.util.files import replace_retrying
from core.util.locks import LockBusy, held_briefly
from core.util.procs import CREATE_NO_WINDOW, module_running

LOG_MAX_BYTES = 16 << 20  # worker.log is rotated past this: with worker.log.1, at most 32 MiB
LOG_CHECK_S = 30.0
SUPERVISED_ENV = "RLPANEL_SUPERVISED"  # set for the worker: its supervisor sends its end's notification
STOP_WAIT_S = 30.0  # a worker killed by a stop: how long the stop has to record the run's end


def _log(line: str) -> None:
    try:
        print(f"supervisor: {line}", flush=True)
    except OSError:  # a full disk under worker.log: the notification matters more than the line
        pass


def death_reason(returncode: int, platform: str = sys.platform) -> str:
    """Why the worker's process ended, from its exit status, in words."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        if name == "SIGKILL":
            return ("the worker was killed (SIGKILL: kill -9, or the system's out-of-memory killer when the machine "
                    "ran out of memory)")
        return f"the worker was ended by {name}"
    if platform.startswith("win") and returncode in (1, 15, 0xFFFFFFFF):  # Task Manager 1, psutil's kill 15
        return f"the worker was ended (exit code {returncode}: Task Manager, taskkill or the system ended it)"
    if returncode >= 0xC0000000:
        return f"the worker's Python crashed (exit code {returncode:#x})"
    return f"the worker exited with code {returncode} without recording how the run ended (see worker.log)"


def crash_reason(run_dir: Path, returncode: int) -> str:
    """How the worker died and the step the run reached (never before its newest checkpoint: ``core.run.reached``).
    What follows (a planned resume, or the command) is added once decided (``settle``)."""
    reason = death_reason(returncode)
    step = step_reached(run_dir)
    return f"{reason} at step {step:,}" if step else reason


def rotate_log(log: Path, max_bytes: int = LOG_MAX_BYTES) -> bool:
    """Past ``max_bytes``: ``log`` copied to ``<log>.1`` (replacing the older copy) and emptied."""
    try:
        size = log.stat().st_size
    except OSError:
        return False
    if size <= max_bytes:
        return False
    older = log.with_name(log.name + ".1")
    temp = log.with_name(f".{log.name}.1.tmp")
    try:
        shutil.copyfile(log, temp)
        replace_retrying(temp, older)
        os.truncate(log, 0)  # the writers append: their next line starts the emptied file
    except OSError as exc:
        temp.unlink(missing_ok=True)
        _log(f"could not rotate {log.name} ({exc.strerror or exc}); it keeps growing")
        return False
    _log(f"{log.name} passed {max_bytes / 2**20:g} MiB: its earlier lines are in {older.name}")
    return True


def _wait_for_stop(run_dir: Path, timeout: float = STOP_WAIT_S) -> None:
    """A STOP file is there: the worker was ended by a stop, which records the run's end itself."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and RunDir(run_dir).stop_request.exists():
        if read_recorded_status(run_dir).state in TERMINAL:
            return
        time.sleep(0.2)


class Ending(NamedTuple):
    """A worker's end as reported: the event, its reason, and the automatic resume planned for it (None: not
    planned, a run that did not fail)."""

    event: str
    reason: str | None
    decision: auto_resume.Decision | None = None


def settle(run_dir: Path, launched_at: float | None, returncode: int) -> Ending | None:
    """After the worker's end: the ``Ending`` to report, or None when it is not this attempt's to report.

    A worker that left its run active is marked ``crashed`` here (under the run's control lock,
    so a resume does not start between the check and the write). A crashed or failed run's automatic resume is
    planned next (``core.launch.auto_resume``); a crash recorded here then gets what follows written into its reason:
    the planned resume, or the command that resumes it, never a resume that nothing will start.
    """
    if read_recorded_status(run_dir).state not in TERMINAL and RunDir(run_dir).stop_request.exists():
        _wait_for_stop(run_dir)
    with held_briefly(RunDir(run_dir).control_lock, what=f"run {run_dir.name}"):
        status = read_recorded_status(run_dir)
        if status.launched_at != launched_at:
            return None  # a newer attempt owns the run folder now
        crash = None
        if status.state not in TERMINAL:
            if module_running(WORKER_MODULE, run_dir):
                return None  # our worker was refused by the run's lock: another worker writes this run
            crash = crash_reason(run_dir, returncode)
            write_status(run_dir, state="crashed", ended_at=time.time(), exit_reason=crash, error={"message": crash},
                         failure_kind="killed" if returncode == -getattr(signal, "SIGKILL", 9) else "crashed",
                         stalled=None)
    if crash is None:
        return _recorded_ending(run_dir, status.state, status.exit_reason or None)
    decision = _plan_resume(run_dir)
    reason = _record_next_step(run_dir, launched_at, f"{crash}; {auto_resume.next_step(run_dir, decision)}")
    _log(f"crashed: {reason}")
    return Ending("crashed", reason, decision)


def _recorded_ending(run_dir: Path, event: str, reason: str | None) -> Ending:
    """An end the worker (or a stop) recorded, as recorded; a failure says what its automatic resume will do."""
    decision = _plan_resume(run_dir) if event in FAILED else None
    if decision is not None and decision.sentence:
        reason = f"{reason or event}; {decision.sentence}"
        _log(decision.sentence)
    return Ending(event, reason, decision)


def _record_next_step(run_dir: Path, launched_at: float | None, reason: str) -> str:
    """The crash's reason with what follows, written over the first one unless a newer attempt began meanwhile."""
    try:
        with held_briefly(RunDir(run_dir).control_lock, what=f"run {run_dir.name}"):
            status = read_recorded_status(run_dir)
            if status.launched_at == launched_at and status.state == "crashed":
                write_status(run_dir, exit_reason=reason, error={"message": reason})
    except LockBusy as exc:  # the notification still says it; the status keeps how it died
        _log(f"could not record what follows the crash: {exc}")
    return reason


def start_worker(run_dir: Path, resume: bool, platform: str = sys.platform) -> subprocess.Popen[bytes]:
    """The worker as this process's child, its output going where this process's goes (worker.log)."""
    env = utf8_env({**os.environ, SUPERVISED_ENV: "1"})
    flags = CREATE_NO_WINDOW if platform.startswith("win") else 0  # no console window pops up on Windows
    return subprocess.Popen(worker_command(run_dir, resume), stdin=subprocess.DEVNULL, env=env, creationflags=flags)


def supervise(run_dir: Path, resume: bool = False) -> int:
    run_dir = Path(run_dir).resolve()
    launched_at = read_recorded_status(run_dir).launched_at
    worker = start_worker(run_dir, resume)
    syncer = _start_sync(run_dir)
    if hasattr(signal, "SIGTERM"):  # a SIGTERM meant for the run (a stop): the worker takes it, this one waits
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # (set after the start: an ignored signal is inherited)
    while True:
        try:
            returncode = worker.wait(LOG_CHECK_S)
            break
        except subprocess.TimeoutExpired:
            rotate_log(RunDir(run_dir).worker_log)
        except KeyboardInterrupt:  # a console Ctrl-C reaches the worker too; it records its own end
            continue
    try:
        ending = settle(run_dir, launched_at, returncode)
    except LockBusy as exc:
        _log(f"could not settle the run's end: {exc}")
        ending = None
    due_at = ending.decision.due_at if ending is not None and ending.decision is not None else None
    if ending is not None:
        notify_run_event(run_dir, ending.event, ending.reason, log=_log)
    _await_sync(syncer, due_at)
    if due_at is not None:
        _resume_when_due(run_dir, due_at)
    return returncode if returncode >= 0 else 128 - returncode


def _start_sync(run_dir: Path) -> subprocess.Popen[bytes] | None:
    """``runtime.sync``: the run's sync child (``core.sync.auto``), following it beside the worker."""
    try:
        return start_sync(run_dir)
    except OSError as exc:  # the run trains on; the sync is a command away
        _log(f"runtime.sync could not start: {exc}; rlpanel sync {run_dir.name} --to TRACKER sends it")
        return None


def _await_sync(syncer: subprocess.Popen[bytes] | None, resume_due_at: float | None) -> None:
    """The sync child's last pass, after the worker's end (it sees the run ended); left running past the bound, or
    past a planned resume's time (a slow tracker never delays the run)."""
    if syncer is None:
        return
    bound = WAIT_AT_END_S if resume_due_at is None else max(0.0, min(WAIT_AT_END_S, resume_due_at - time.time()))
    try:
        syncer.wait(bound)
    except subprocess.TimeoutExpired:
        _log(f"the sync is still sending after {bound:g} s; it goes on by itself")


def _plan_resume(run_dir: Path) -> auto_resume.Decision | None:
    try:
        return auto_resume.plan(run_dir)
    except (LockBusy, OSError) as exc:
        _log(f"could not plan an automatic resume: {exc}")
        return None


def _resume_when_due(run_dir: Path, due_at: float) -> None:
    """Wait out the back-off, then resume the run unless someone resumed, restarted or deleted it meanwhile.
    This process stays until then (a queue runner resumes the run if this one is gone)."""
    while (left := due_at - time.time()) > 0:
        time.sleep(min(left, 5.0))
    if not RunDir(run_dir).config.is_file():
        return  # deleted
    try:
        if auto_resume.resume_if_due(run_dir, reap=False):
            _log("resumed automatically")
    except (LockBusy, OSError) as exc:
        _log(f"the automatic resume did not start: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.launch.supervisor")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    return supervise(args.run_dir, args.resume)


if __name__ == "__main__":
    sys.exit(main())
