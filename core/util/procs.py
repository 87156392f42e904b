"""Processes: who a pid is, whether it still runs, its tree, and starting one detached.

A pid alone may be reused after its process ended; a pid together with its start time names one
process. The platform decisions (how to detach, which multiprocessing start method really runs)
are functions of a platform name so that the Windows paths are tested on Linux too.

psutil is imported by the functions that ask it, not with this module: the window's first frame loads this module
(the run status and TensorBoard modules import it) and asks psutil nothing before that frame (issue 29).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.util.console import utf8_env
from core.util.paths import CODE_ROOT, absolute

# Windows process-creation flags (subprocess defines them only on Windows).
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_NO_WINDOW = 0x08000000
CREATE_BREAKAWAY_FROM_JOB = 0x01000000
ERROR_ACCESS_DENIED = 5
if TYPE_CHECKING:
    import psutil

BREAKAWAY_REFUSED = ("the terminal's job object refused to let the process break away: it ends when that terminal "
                     "(VS Code, JetBrains) closes; start rlpanel from a plain terminal or the Start-menu shortcut "
                     "for runs that outlive it")


def process_identity(pid: int | None = None) -> dict[str, Any]:
    """``pid`` and its start time: together they name one process (a pid alone may be reused)."""
    import psutil

    proc = psutil.Process(pid or os.getpid())
    return {"pid": proc.pid, "pid_create_time": proc.create_time(), "host": socket.gethostname()}


def is_alive(pid: int | None, create_time: float | None) -> bool:
    """Whether the process that had ``pid`` at ``create_time`` still runs (zombies are dead)."""
    import psutil

    if not pid:
        return False
    try:
        proc = psutil.Process(pid)
        if create_time is not None and abs(proc.create_time() - create_time) > 1.0:
            return False
        return bool(proc.status() != psutil.STATUS_ZOMBIE)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError, OverflowError, TypeError):
        return False


def process_tree(pid: int) -> list[psutil.Process]:
    """``pid`` and all its descendants (empty when the process is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError, OverflowError, TypeError):
        return []


def terminate_tree(pid: int, grace_s: float = 5.0, root_first: bool = False) -> None:
    """Terminate ``pid`` and its descendants; kill what is still there after ``grace_s``.

    ``root_first`` sends SIGTERM to ``pid`` alone and gives it ``grace_s`` to end (a worker takes
    it as a graceful stop and closes its own env processes) before the rest of the tree is asked.
    """
    import psutil

    procs = process_tree(pid)
    if root_first and procs:
        try:
            procs[0].terminate()
        except psutil.NoSuchProcess:
            pass
        gone, _ = psutil.wait_procs(procs[:1], timeout=grace_s)
        procs = [p for p in procs if p not in gone]
    for proc in procs:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=grace_s)


# --- starting processes ---------------------------------------------------------------------

def detach_popen_kwargs(platform: str = sys.platform, breakaway: bool = True) -> dict[str, Any]:
    """``Popen`` arguments that detach a child from its parent's terminal on ``platform``.

    On Windows the child also leaves the parent's job object (``breakaway``): an IDE's terminal
    puts its processes in a job that is closed, with every process in it, when the terminal closes.
    """
    if platform.startswith("win"):
        flags = CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW | (CREATE_BREAKAWAY_FROM_JOB if breakaway else 0)
        return {"creationflags": flags}
    return {"start_new_session": True}


def breakaway_refused(exc: OSError) -> bool:
    """CreateProcess said ERROR_ACCESS_DENIED: the job this process is in does not allow breakaway."""
    return getattr(exc, "winerror", None) == ERROR_ACCESS_DENIED or isinstance(exc, PermissionError)


def effective_start_method(requested: str, platform: str = sys.platform) -> tuple[str, str | None]:
    """The multiprocessing start method that will be used, and a note when it differs."""
    if platform.startswith("win") and requested in ("forkserver", "fork"):
        return "spawn", f"start_method {requested} does not exist on Windows; using spawn"
    if platform == "darwin" and requested == "fork":
        return "spawn", "start_method fork is unsafe on macOS; using spawn"
    return requested, None


def child_env(extra_env: dict[str, str] | None = None, folder: str | None = None) -> dict[str, str]:
    """The environment of an rlpanel child process: rlpanel's code first on its path, then ``folder`` (a custom
    env's import folder, also its working folder), unbuffered UTF-8 output (``core.util.console``), an absolute
    ``RLPANEL_HOME``."""
    env = utf8_env({**os.environ, **(extra_env or {}), "PYTHONUNBUFFERED": "1"})
    if env.get("RLPANEL_HOME"):  # the child starts in another folder: a relative home would point elsewhere
        env["RLPANEL_HOME"] = str(absolute(env["RLPANEL_HOME"]))
    paths = [str(CODE_ROOT), *([folder] if folder else []), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def spawn_detached(cmd: list[str], log_path: Path, extra_env: dict[str, str] | None = None,
                   reap: bool = True, folder: str | None = None, notes: list[str] | None = None,
                   platform: str = sys.platform, popen: Any = subprocess.Popen) -> subprocess.Popen[bytes]:
    """Start ``cmd`` detached from this process, its output appended to ``log_path``.

    ``folder`` (a custom env's import folder) is the child's working folder and on its path,
    after rlpanel's own code. When a Windows job refuses breakaway the child starts inside it:
    that is written to the log and appended to ``notes`` for the window's status line.
    With ``reap`` a daemon thread waits for the child so it does not linger as a zombie while
    this process lives (a zombie would look alive to a pid check).
    """
    env = child_env(extra_env, folder)
    with open(log_path, "ab") as log:
        common: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": log, "stderr": subprocess.STDOUT, "env": env,
                                  "cwd": folder or str(CODE_ROOT), "close_fds": True}
        proc: subprocess.Popen[bytes]
        try:
            proc = popen(cmd, **common, **detach_popen_kwargs(platform))
        except OSError as exc:
            if not (platform.startswith("win") and breakaway_refused(exc)):
                raise
            log.write(f"rlpanel: warning: {BREAKAWAY_REFUSED}\n".encode())
            log.flush()
            proc = popen(cmd, **common, **detach_popen_kwargs(platform, breakaway=False))
            if notes is not None:
                notes.append(BREAKAWAY_REFUSED)
    if reap:
        threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()
    return proc


# Modules renamed in November 2026 (issue 48): a worker or supervisor started by the version before, still
# running after an upgrade, has the former name on its command line.
FORMER_MODULE_NAMES = {"core.worker.main": "core.training.worker", "core.launch.supervisor": "core.notify.supervisor"}


def module_running(module: str, target: Path) -> bool:
    """Whether some live process runs ``python -m module ... target`` (``target`` compared resolved), or the module
    under its former name.

    How a reader tells a worker that died before it could write its pid from one still loading.
    """
    import psutil

    want = Path(target).resolve()
    names = {module, FORMER_MODULE_NAMES.get(module, module)}
    for proc in psutil.process_iter(["cmdline"]):
        try:
            cmd = proc.info["cmdline"] or []
        except psutil.Error:
            continue
        name = next((part for part in cmd if part in names), None)
        if name is None:
            continue
        args = cmd[cmd.index(name) + 1:]
        if any(not a.startswith("-") and Path(a).resolve() == want for a in args):
            return True
    return False


def tree_pids(pid: int) -> set[int]:
    """The pids of ``pid``'s tree (empty when it is gone): what the telemetry samplers match."""
    return {p.pid for p in process_tree(pid)}
