"""Starting a detached process on Windows when the terminal's job object refuses breakaway.

Windows' CreateProcess fails with ERROR_ACCESS_DENIED when the caller's job does not allow
CREATE_BREAKAWAY_FROM_JOB (a VS Code or JetBrains terminal). ``WindowsPopen`` makes that happen
here: it refuses the flag the way Windows does and otherwise starts a real process.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from core.util.procs import (
    BREAKAWAY_REFUSED,
    CREATE_BREAKAWAY_FROM_JOB,
    CREATE_NEW_PROCESS_GROUP,
    CREATE_NO_WINDOW,
    module_running,
    spawn_detached,
)


class WindowsPopen:
    """``Popen`` as Windows answers it inside a job that forbids breakaway (``allow=False``)."""

    def __init__(self, allow: bool, error: OSError | None = None):
        self.allow, self.error, self.flags = allow, error, []

    def __call__(self, cmd, creationflags=0, **kwargs):
        self.flags.append(creationflags)
        if creationflags & CREATE_BREAKAWAY_FROM_JOB and not self.allow:
            if self.error is not None:
                raise self.error
            error = PermissionError(13, "Access is denied")
            error.winerror = 5  # what CreateProcess's ERROR_ACCESS_DENIED becomes in Python
            raise error
        return subprocess.Popen(cmd, start_new_session=True, **kwargs)  # the real process, POSIX-detached


def started(proc) -> None:
    assert proc.wait(timeout=60) == 0


def test_a_refused_breakaway_starts_inside_the_job_and_says_so(tmp_path):
    log = tmp_path / "worker.log"
    popen = WindowsPopen(allow=False)
    notes: list[str] = []
    proc = spawn_detached([sys.executable, "-c", "print('worker up')"], log, reap=False, notes=notes,
                          platform="win32", popen=popen)
    started(proc)
    assert popen.flags == [CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW | CREATE_BREAKAWAY_FROM_JOB,
                           CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW]
    assert notes == [BREAKAWAY_REFUSED] and "VS Code" in BREAKAWAY_REFUSED
    text = log.read_text()
    assert text.index(f"rlpanel: warning: {BREAKAWAY_REFUSED}") < text.index("worker up")


def test_an_allowed_breakaway_says_nothing(tmp_path):
    popen = WindowsPopen(allow=True)
    notes: list[str] = []
    started(spawn_detached([sys.executable, "-c", "pass"], tmp_path / "w.log", reap=False, notes=notes,
                           platform="win32", popen=popen))
    assert popen.flags == [CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW | CREATE_BREAKAWAY_FROM_JOB] and notes == []
    assert (tmp_path / "w.log").read_text() == ""


def test_other_start_errors_are_not_taken_for_a_refusal(tmp_path):
    popen = WindowsPopen(allow=False, error=FileNotFoundError(2, "The system cannot find the file specified"))
    with pytest.raises(FileNotFoundError):
        spawn_detached([sys.executable, "-c", "pass"], tmp_path / "w.log", platform="win32", popen=popen)
    assert len(popen.flags) == 1


def test_the_import_folder_is_the_working_folder_and_on_the_path(tmp_path):
    folder = tmp_path / "my project"
    folder.mkdir()
    (folder / "mymodule.py").write_text("VALUE = 42\n")
    out = tmp_path / "out.log"
    code = "import os, mymodule; print(os.getcwd(), mymodule.VALUE)"
    proc = spawn_detached([sys.executable, "-c", code], out, reap=False, folder=str(folder))
    started(proc)
    assert out.read_text().strip() == f"{folder} 42"


def test_a_worker_started_under_its_former_module_name_is_still_seen_running(tmp_path):
    """A run training across an upgrade: its worker's command line still names core.training.worker."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    other = tmp_path / "other"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "core.training.worker", str(run_dir)])
    try:
        deadline = time.monotonic() + 20
        while not module_running("core.worker.main", run_dir) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert module_running("core.worker.main", run_dir)
        assert not module_running("core.worker.main", other)
        assert not module_running("core.launch.supervisor", run_dir)
    finally:
        proc.kill()
        proc.wait()
    assert not module_running("core.worker.main", run_dir)
