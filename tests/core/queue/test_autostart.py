"""The start-up entry that resumes a queue after a restart: the XDG file for real, Windows by recorded commands."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from core.queue.autostart import AutostartError, Host, find, gone, register, remove, resume_command, task_name
from core.queue.record import QueueState, StartupEntry
from core.util.paths import CODE_ROOT

TASK_NS = {"t": "http://schemas.microsoft.com/windows/2004/02/mit/task"}


def desktop_values(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if "=" in line)


def parse_exec(value: str) -> list[str]:
    """A desktop entry's ``Exec`` back into its arguments, by the spec: the string escapes (``\\\\``), then the
    quoting (inside double quotes a backslash escapes ``"``, ``` ` ```, ``$`` and ``\\``), ``%%`` a ``%``."""
    text = value.replace("\\\\", "\x00").replace("\x00", "\\").replace("%%", "%")
    args, current, quoted, i, started = [], "", False, 0, False
    while i < len(text):
        c = text[i]
        if quoted and c == "\\" and i + 1 < len(text) and text[i + 1] in '"`$\\':
            current, i = current + text[i + 1], i + 2
            continue
        if c == '"':
            quoted, started = not quoted, True
        elif c == " " and not quoted:
            if started:
                args.append(current)
            current, started = "", False
        else:
            current, started = current + c, True
        i += 1
    return [*args, current] if started else args


def test_linux_xdg_entry_runs_the_resume_command_and_is_removed(tmp_path):
    """The .desktop file in XDG_CONFIG_HOME/autostart: its Exec line, parsed back, is ``queue resume`` of this
    runs folder with this Python; run for real (no queue there), it says so and removes its own entry."""
    runs = tmp_path / "runs with space & 100%"
    runs.mkdir()
    host = Host(platform="linux", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "RLPANEL_HOME": str(tmp_path / "home")})
    entry = register(runs, "20260101-230000", host)
    path = tmp_path / "xdg" / "autostart" / Path(entry.where).name
    assert entry.kind == "xdg" and Path(entry.where) == path and path.name.startswith("rlpanel-queue-")
    values = desktop_values(path)
    cmd = parse_exec(values["Exec"])
    assert cmd == [sys.executable, "-m", "core.cli", "queue", "resume", "--runs-dir", str(runs),
                   "--home", str(tmp_path / "home")]
    assert cmd == resume_command(runs, host) and values["Path"] == str(CODE_ROOT) and values["Type"] == "Application"
    assert find(runs, host) == entry

    env = {"PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(cmd, cwd=values["Path"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"no queue in {runs}: nothing to resume; removed the start-up entry ({path})" in done.stdout
    assert not path.exists() and find(runs, host) is None
    assert remove(runs, host) == []  # idempotent


class Recorder:
    """Task Scheduler as recorded: each command's argv (and the task's XML, read while it exists) and a canned answer."""

    def __init__(self, create_rc: int = 0, create_out: str = "SUCCESS: The scheduled task was successfully created."):
        self.calls: list[list[str]] = []
        self.xml: str | None = None
        self.create = (create_rc, create_out)

    def __call__(self, argv, **kwargs):
        self.calls.append(list(argv))
        assert kwargs["capture_output"] and kwargs["text"]
        if "/Create" in argv:
            self.xml = Path(argv[argv.index("/XML") + 1]).read_text(encoding="utf-16")
            rc, out = self.create
            return subprocess.CompletedProcess(argv, rc, out if rc == 0 else "", out if rc else "")
        if "/Delete" in argv:
            ok = self.create[0] == 0
            return subprocess.CompletedProcess(argv, 0 if ok else 1, "SUCCESS: deleted" if ok else "",
                                               "" if ok else "ERROR: The system cannot find the file specified.")
        return subprocess.CompletedProcess(argv, 0 if self.create[0] == 0 else 1, "", "")


def windows_host(tmp_path, run) -> Host:
    scripts = tmp_path / "venv" / "Scripts"
    scripts.mkdir(parents=True)
    (scripts / "pythonw.exe").write_bytes(b"")
    env = {"APPDATA": str(tmp_path / "AppData" / "Roaming"), "USERNAME": "ada", "USERDOMAIN": "LAB-PC"}
    return Host(platform="win32", env=env, run=run, python=str(scripts / "python.exe"))


def test_windows_task_at_logon_from_xml_and_its_removal(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    rec = Recorder()
    host = windows_host(tmp_path, rec)
    entry = register(runs, "20260101-230000", host)
    name = task_name(runs)
    assert entry.kind == "task" and entry.where == name and name.startswith("rlpanel\\queue ") and not entry.note
    assert rec.calls[0][:4] == ["schtasks", "/Create", "/TN", name] and rec.calls[0][-1] == "/F"
    assert not Path(rec.calls[0][5]).exists()  # the XML file is gone once registered
    task = ET.fromstring(rec.xml.split("?>", 1)[1])
    exe = task.find("t:Actions/t:Exec", TASK_NS)
    assert exe.findtext("t:Command", namespaces=TASK_NS) == str(tmp_path / "venv" / "Scripts" / "pythonw.exe")
    assert exe.findtext("t:Arguments", namespaces=TASK_NS) == f"-m core.cli queue resume --runs-dir {runs}"
    assert exe.findtext("t:WorkingDirectory", namespaces=TASK_NS) == str(CODE_ROOT)
    assert task.findtext("t:Triggers/t:LogonTrigger/t:UserId", namespaces=TASK_NS) == "LAB-PC\\ada"
    assert task.findtext("t:Settings/t:DisallowStartIfOnBatteries", namespaces=TASK_NS) == "false"
    assert not list((tmp_path / "AppData").rglob("*.cmd"))  # no fallback file

    rec.calls.clear()
    assert remove(runs, host) == [f"the Task Scheduler task {name}"]
    assert rec.calls == [["schtasks", "/Delete", "/TN", name, "/F"]]


def test_windows_access_denied_falls_back_to_a_startup_folder_file(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    rec = Recorder(create_rc=1, create_out="ERROR: Access is denied.")
    host = windows_host(tmp_path, rec)
    entry = register(runs, "20260101-230000", host)
    startup = tmp_path / "AppData" / "Roaming" / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"
    assert entry.kind == "startup" and Path(entry.where).parent == startup and entry.where.endswith(".cmd")
    assert entry.note == "Task Scheduler refused the log-on task: ERROR: Access is denied."
    lines = Path(entry.where).read_bytes().decode("utf-8").split("\r\n")  # CRLF, as cmd.exe wants
    pythonw = tmp_path / "venv" / "Scripts" / "pythonw.exe"
    assert lines[0] == "@echo off" and lines[1] == "chcp 65001 >nul"
    assert f"cd /d {CODE_ROOT}" in lines and f'start "" {pythonw} -m core.cli queue resume --runs-dir {runs}' in lines
    assert find(runs, host) == type(entry)("startup", entry.where)

    assert not gone(entry)
    rec.calls.clear()
    assert remove(runs, host) == [entry.where]  # the file; no task to delete (schtasks says so, exit 1)
    assert not Path(entry.where).exists() and rec.calls == [["schtasks", "/Delete", "/TN", task_name(runs), "/F"]]
    assert gone(entry)  # the Queue tab stops saying the queue resumes after a restart
    rec.calls.clear()
    assert not gone(StartupEntry("task", task_name(runs))) and rec.calls == []  # a task is not asked of schtasks


def test_macos_is_refused_with_the_way_out_and_nothing_written(tmp_path):
    host = Host(platform="darwin", env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    with pytest.raises(AutostartError, match="not supported on macOS: nothing was registered; after a restart, run: "
                                            "rlpanel queue resume --runs-dir"):
        register(tmp_path / "runs", "q", host)
    assert list(tmp_path.iterdir()) == [] and find(tmp_path / "runs", host) is None


def test_the_state_file_keeps_the_entry_and_an_older_state_has_none():
    state = QueueState(id="q", plan={}, state="running", jobs=[],
                       survive_reboot=StartupEntry("startup", "C:/x.cmd", note="Task Scheduler refused"))
    data = state.to_json()
    assert data["survive_reboot"] == {"kind": "startup", "where": "C:/x.cmd", "note": "Task Scheduler refused"}
    assert QueueState.from_json(data) == state and data["queue_version"] == 2
    assert QueueState.from_json({"id": "old", "state": "finished"}).survive_reboot is None


def test_queue_status_says_resumes_after_a_restart_only_while_the_entry_would(tmp_path):
    """Issue 42: the line stayed after the entry was removed; the CLI and the Queue tab ask one rule."""
    from core.cli.queue import _table
    from core.queue.autostart import standing_entry
    from core.queue.record import QueueState

    desktop = tmp_path / "rlpanel-queue-x.desktop"
    desktop.write_text("[Desktop Entry]\n", encoding="utf-8")
    entry = StartupEntry("xdg", str(desktop))
    running = QueueState(id="q", plan={}, state="running", jobs=[], survive_reboot=entry)
    assert standing_entry(running) == entry and "resumes after a restart" in _table(running)
    finished = QueueState(id="q", plan={}, state="finished", jobs=[], survive_reboot=entry)
    assert standing_entry(finished) is None and "resumes after a restart" not in _table(finished)
    desktop.unlink()  # removed by hand
    assert standing_entry(running) is None and "resumes after a restart" not in _table(running)
