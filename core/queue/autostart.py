"""A per-user start-up entry that runs ``rlpanel queue resume`` at log-on, so a queue survives a reboot.

Windows Update restarts machines at night, and after the restart nothing of rlpanel runs until the user
logs in. The entry (one per runs folder, named by a hash of its path) starts ``python -m core.cli queue
resume --runs-dir RUNS`` when the user logs in; the queue runner removes it when the queue ends.

- Windows: a Task Scheduler task at log-on for this user only, registered from an XML file
  (``schtasks /Create /TN "rlpanel\\queue HASH" /XML FILE /F``). The XML rather than ``/SC ONLOGON /TR``:
  ``/TR`` holds at most 262 characters and sets no working folder, and the XML also lets the task start on
  battery power. When schtasks refuses (often "ERROR: Access is denied." with exit code 1 for a user who is
  not an administrator, or a policy), a ``.cmd`` file goes into the user's Startup folder instead. A
  ``.cmd`` rather than a ``.lnk``: Python writes it itself, where a ``.lnk`` needs PowerShell's COM objects,
  which Constrained Language Mode blocks on the same locked-down machines that refuse schtasks; and rather
  than a ``.vbs``: Windows is phasing VBScript out. Its cost is a console window that flashes for a moment
  at log-on (it ``start``\\ s ``pythonw.exe`` and ends).
- Linux: an XDG autostart entry, ``$XDG_CONFIG_HOME/autostart/rlpanel-queue-HASH.desktop`` (``~/.config``
  by default), which every desktop that follows the XDG autostart spec starts at log-in.
- macOS: not supported; nothing is written and the error says so.

Everything a platform touches comes in through ``Host`` (platform, environment, the command runner,
the Python), so the Windows paths and commands are tested on any machine with recorded output.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from core.queue.record import QueueState, StartupEntry
from core.queue.state import is_active, write_queue
from core.util.paths import CODE_ROOT, absolute

TASK_FOLDER = "rlpanel"
CREATE_NO_WINDOW = 0x08000000  # schtasks from a runner under pythonw.exe must not open a console window
Runner = Callable[..., "subprocess.CompletedProcess[str]"]


class AutostartError(RuntimeError):
    """No start-up entry could be made here (macOS, or both ways refused on Windows): the message says what to do."""


@dataclass(frozen=True)
class Host:
    """What the entry depends on: the platform, the environment (paths, user), how commands run, the Python."""

    platform: str = sys.platform
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    run: Runner = subprocess.run
    python: str = sys.executable

    @property
    def windows(self) -> bool:
        return self.platform.startswith("win")

    def command(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        """``argv`` run with its output captured; a missing program reads as exit code 127 with the reason."""
        extra = {"creationflags": CREATE_NO_WINDOW} if self.windows and sys.platform.startswith("win") else {}
        try:
            return self.run(argv, capture_output=True, text=True, timeout=60, **extra)
        except (OSError, subprocess.SubprocessError) as exc:  # no schtasks, or it hung: the fallback takes over
            return subprocess.CompletedProcess(argv, 127, "", str(exc))


def runs_hash(runs_dir: Path | str) -> str:
    """A short, stable name for a runs folder (case-folded on Windows, where paths are)."""
    text = os.path.normcase(str(absolute(runs_dir)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def task_name(runs_dir: Path | str) -> str:
    return f"{TASK_FOLDER}\\queue {runs_hash(runs_dir)}"


def startup_file(runs_dir: Path | str, host: Host) -> Path:
    """The fallback on Windows: ``%APPDATA%\\Microsoft\\Windows\\Start Menu\\Programs\\Startup\\rlpanel-queue-HASH.cmd``."""
    appdata = Path(host.env.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    return appdata / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup" / f"rlpanel-queue-{runs_hash(runs_dir)}.cmd"


def xdg_file(runs_dir: Path | str, host: Host) -> Path:
    """``$XDG_CONFIG_HOME/autostart/rlpanel-queue-HASH.desktop`` (``~/.config`` when the variable is unset or empty)."""
    config = host.env.get("XDG_CONFIG_HOME") or str(Path(host.env.get("HOME") or Path.home()) / ".config")
    return Path(config) / "autostart" / f"rlpanel-queue-{runs_hash(runs_dir)}.desktop"


def python_for(host: Host) -> str:
    """The Python the entry starts: ``pythonw.exe`` beside this one on Windows (no console window), else this one."""
    if host.windows:
        quiet = Path(host.python).with_name("pythonw.exe")
        if quiet.exists():
            return str(quiet)
    return host.python


def resume_command(runs_dir: Path | str, host: Host) -> list[str]:
    """What the entry runs: ``PYTHON -m core.cli queue resume --runs-dir RUNS [--home RLPANEL_HOME]``.

    Started in ``CODE_ROOT`` (as every rlpanel child is), so ``-m core.cli`` finds this same copy of rlpanel.
    """
    cmd = [python_for(host), "-m", "core.cli", "queue", "resume", "--runs-dir", str(absolute(runs_dir))]
    if host.env.get("RLPANEL_HOME"):  # a user folder of its own: presets, notify.yaml, calibration
        cmd += ["--home", str(absolute(host.env["RLPANEL_HOME"]))]
    return cmd


# --- Linux ------------------------------------------------------------------------------------------

def _exec_arg(arg: str) -> str:
    """One argument of a desktop entry's ``Exec`` key, quoted by the spec's rules, then escaped as a string value."""
    needs_quotes = any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`=") or not arg
    if needs_quotes:
        arg = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    return arg.replace("\\", "\\\\").replace("%", "%%")


def desktop_entry(runs_dir: Path | str, queue_id: str, cmd: list[str]) -> str:
    return ("[Desktop Entry]\nType=Application\nName=rlpanel queue resume\n"
            f"Comment=Resumes rlpanel's queue {queue_id} of {absolute(runs_dir)} after a restart "
            "(removed when the queue ends)\n"
            f"Exec={' '.join(_exec_arg(a) for a in cmd)}\nPath={CODE_ROOT}\nTerminal=false\nNoDisplay=true\n"
            "X-GNOME-Autostart-enabled=true\n")


# --- Windows ----------------------------------------------------------------------------------------

def task_xml(cmd: list[str], user: str, queue_id: str) -> str:
    """The task: at this user's log-on (30 s later), as this user, least privilege, on battery too."""
    args = subprocess.list2cmdline(cmd[1:])
    return f"""<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Author>rlpanel</Author>
    <Description>Resumes rlpanel's queue {escape(queue_id)} after a restart; removed when the queue ends.</Description>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger>
      <Enabled>true</Enabled>
      <UserId>{escape(user)}</UserId>
      <Delay>PT30S</Delay>
    </LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>{escape(user)}</UserId>
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <StartWhenAvailable>true</StartWhenAvailable>
    <ExecutionTimeLimit>PT1H</ExecutionTimeLimit>
    <Enabled>true</Enabled>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>{escape(cmd[0])}</Command>
      <Arguments>{escape(args)}</Arguments>
      <WorkingDirectory>{escape(str(CODE_ROOT))}</WorkingDirectory>
    </Exec>
  </Actions>
</Task>
"""


def _batch_arg(arg: str) -> str:
    """One argument of a ``.cmd`` line: quoted unless plainly safe (``&``, ``^``, ``(`` are literal inside
    quotes; a Windows path holds no ``"``), ``%`` doubled (batch files expand ``%NAME%`` even there)."""
    if not re.fullmatch(r"[\w\-.:\\/]+", arg):
        arg = f'"{arg}"'
    return arg.replace("%", "%%")


def startup_cmd(cmd: list[str], queue_id: str, runs_dir: Path | str) -> str:
    """The Startup folder's ``.cmd``: UTF-8 (``chcp 65001``: a user name outside the code page), started
    in ``CODE_ROOT``, ``start`` so that the console closes at once while ``pythonw.exe`` goes on."""
    about = f"{queue_id} of {absolute(runs_dir)}".replace("%", "%%")
    return ("@echo off\r\nchcp 65001 >nul\r\n"
            f"rem rlpanel: resumes queue {about} after a restart; removed when the queue ends\r\n"
            f"cd /d {_batch_arg(str(CODE_ROOT))}\r\nstart \"\" {' '.join(_batch_arg(a) for a in cmd)}\r\n")


def _user(host: Host) -> str:
    user = host.env.get("USERNAME") or "user"
    return f"{host.env['USERDOMAIN']}\\{user}" if host.env.get("USERDOMAIN") else user


def _register_windows(runs_dir: Path, queue_id: str, cmd: list[str], host: Host, scratch: Path) -> StartupEntry:
    name = task_name(runs_dir)
    scratch.mkdir(parents=True, exist_ok=True)
    xml_path = scratch / "autostart-task.xml"
    xml_path.write_text(task_xml(cmd, _user(host), queue_id), encoding="utf-16")  # BOM + UTF-16, as schtasks writes it
    try:
        done = host.command(["schtasks", "/Create", "/TN", name, "/XML", str(xml_path), "/F"])
    finally:
        xml_path.unlink(missing_ok=True)
    if done.returncode == 0:
        return StartupEntry("task", name)
    refusal = " ".join(f"{done.stdout or ''} {done.stderr or ''}".split()) or f"exit code {done.returncode}"
    path = startup_file(runs_dir, host)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(startup_cmd(cmd, queue_id, runs_dir), encoding="utf-8", newline="")
    except OSError as exc:
        raise AutostartError(f"Task Scheduler refused the log-on task ({refusal}) and the Startup folder could not take "
                             f"{path.name} ({exc}); after a restart, run: rlpanel queue resume --runs-dir {runs_dir}") from None
    return StartupEntry("startup", str(path), note=f"Task Scheduler refused the log-on task: {refusal}")


# --- the entry points -------------------------------------------------------------------------------

def register(runs_dir: Path | str, queue_id: str, host: Host | None = None) -> StartupEntry:
    """Make (or replace) the start-up entry of ``runs_dir``'s queue; returns what was made and where.

    Raises ``AutostartError`` on macOS, or when neither Windows way could be taken.
    """
    host = host or Host()
    root = absolute(runs_dir)
    if host.platform == "darwin":
        raise AutostartError("resuming a queue after a restart is not supported on macOS: nothing was registered; "
                             f"after a restart, run: rlpanel queue resume --runs-dir {root}")
    cmd = resume_command(root, host)
    if host.windows:
        return _register_windows(root, queue_id, cmd, host, root / ".queue")
    path = xdg_file(root, host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(desktop_entry(root, queue_id, cmd), encoding="utf-8")
    return StartupEntry("xdg", str(path))


def find(runs_dir: Path | str, host: Host | None = None) -> StartupEntry | None:
    """The start-up entry of ``runs_dir`` that exists now (None: none, or macOS)."""
    host = host or Host()
    if host.platform == "darwin":
        return None
    if not host.windows:
        path = xdg_file(runs_dir, host)
        return StartupEntry("xdg", str(path)) if path.exists() else None
    path = startup_file(runs_dir, host)
    if path.exists():
        return StartupEntry("startup", str(path))
    name = task_name(runs_dir)
    return StartupEntry("task", name) if host.command(["schtasks", "/Query", "/TN", name]).returncode == 0 else None


def gone(entry: StartupEntry) -> bool:
    """Whether a recorded entry is known to be gone: a file entry (XDG, Startup folder) whose file is not there
    (the user removed it, or ``rlpanel queue resume`` did). A Task Scheduler task is taken as there: asking
    schtasks starts a process, too dear for the Queue tab, which reads the state every second (the runner's
    own removal clears the entry from the state for every kind)."""
    return entry.kind != "task" and not Path(entry.where).exists()


def standing_entry(state: QueueState) -> StartupEntry | None:
    """The start-up entry to tell the user of, as "resumes after a restart": only while it would resume the queue
    (running, or its runner crashed) and is not known to be gone (an ended queue's entry removes itself at the next
    log-on only, and the state keeps an entry removed by hand). ``rlpanel queue status`` and the Queue tab both ask."""
    entry = state.survive_reboot
    if entry is None or not (is_active(state) or state.state == "crashed") or gone(entry):
        return None
    return entry


def remove(runs_dir: Path | str, host: Host | None = None) -> list[str]:
    """Remove whatever start-up entry ``runs_dir`` has (the task, the file); returns what was removed, in words."""
    host = host or Host()
    removed: list[str] = []
    if host.platform == "darwin":
        return removed
    path = startup_file(runs_dir, host) if host.windows else xdg_file(runs_dir, host)
    if path.exists():
        path.unlink()
        removed.append(str(path))
    if host.windows:
        name = task_name(runs_dir)
        if host.command(["schtasks", "/Delete", "/TN", name, "/F"]).returncode == 0:  # none there: a non-zero exit
            removed.append(f"the Task Scheduler task {name}")
    return removed


def entry_json(entry: StartupEntry | None) -> dict[str, Any] | None:
    """``--json``'s view of an entry (with its words)."""
    return None if entry is None else {**entry.to_json(), "description": entry.describe()}


def drop_entry(runs_dir: Path, state: QueueState, log: Callable[[str], None], host: Host | None = None) -> None:
    """The queue ended: remove its start-up entry (when it has one) and forget it in the state."""
    if state.survive_reboot is None:
        return
    entry = state.survive_reboot
    try:
        removed = remove(runs_dir, host)
        state.survive_reboot = None
        write_queue(runs_dir, state)
    except OSError as exc:  # a file Windows keeps open: said; the queue's end is not failed for it
        log(f"could not remove the start-up entry, {entry.describe()}: {exc}")
        return
    log(f"the queue has ended: removed its start-up entry ({', '.join(removed) or 'it was already gone'})")
