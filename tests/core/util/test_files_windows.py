"""Issue 43: a replace that Windows refuses (Defender scanning a fresh checkpoint, a sync client) is retried for
up to ~10 s with a doubling, capped backoff; readers, other systems and the window's thread keep 2 s; a writer that
gives up names the file, who may hold it and the Defender exclusion of the runs folder. Windows happens here by
injected errors (a PermissionError carrying Windows' ``winerror``), an injected clock and sleep, and the platform."""

from __future__ import annotations

import os
import threading
from types import SimpleNamespace

import pytest

from core.run.layout import RunDir
from core.run.status import write_status
from core.util import files
from core.util.files import AtomicWriteError, read_json, retry_on_permission_error, write_json_atomic
from tests.training_helpers import make_run

SHARING_VIOLATION = "The process cannot access the file because it is being used by another process"


def windows_error(winerror: int = 32) -> PermissionError:
    """The PermissionError Python raises on Windows for a sharing violation (winerror 32 maps to EACCES)."""
    exc = PermissionError(13, SHARING_VIOLATION)
    exc.winerror = winerror  # what Python sets on Windows; POSIX's OSError has no such attribute
    return exc


class Refusing:
    """An action that raises Windows' error ``times`` times, then returns ``"done"``."""

    def __init__(self, times: int, winerror: int = 32):
        self.left, self.calls, self.winerror = times, 0, winerror

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.left:
            self.left -= 1
            raise windows_error(self.winerror)
        return "done"


class FakeTime:
    """A clock that only the sleeps move: the delays asked for, exactly."""

    def __init__(self):
        self.now, self.delays = 1000.0, []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, delay: float) -> None:
        self.delays.append(delay)
        self.now += delay


def backoff(bound_s: float) -> list[float]:
    """The delays the writer sleeps before giving up at ``bound_s``: 5 ms doubling, 0.2 s at most."""
    delays, delay = [], files.RETRY_FIRST_DELAY_S
    while sum(delays) + delay <= bound_s:
        delays.append(delay)
        delay = min(delay * 2, files.RETRY_MAX_DELAY_S)
    return delays


@pytest.fixture(autouse=True)
def fresh_thread_marks(monkeypatch):
    """No thread marked short by an earlier test in this process."""
    monkeypatch.setattr(files, "_thread", threading.local())


def test_a_windows_sharing_violation_is_retried_for_ten_seconds_with_a_capped_doubling_backoff():
    clock = FakeTime()
    with pytest.raises(AtomicWriteError):
        retry_on_permission_error(Refusing(10**9), "replace x", sleep=clock.sleep, clock=clock.monotonic,
                                  platform="win32")
    assert clock.delays == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08, 0.16] + [0.2] * 48)
    assert sum(clock.delays) == pytest.approx(9.915) and clock.delays == pytest.approx(backoff(10.0))


@pytest.mark.parametrize("winerror", [5, 32, 33])  # access denied, sharing violation, lock violation
def test_each_of_windows_sharing_errors_gets_the_long_bound(winerror):
    clock = FakeTime()
    with pytest.raises(AtomicWriteError):
        retry_on_permission_error(Refusing(10**9, winerror), "replace x", sleep=clock.sleep, clock=clock.monotonic,
                                  platform="win32")
    assert sum(clock.delays) == pytest.approx(9.915)


def test_a_violation_that_ends_within_the_bound_is_ridden_out():
    clock, action = FakeTime(), Refusing(3)
    assert retry_on_permission_error(action, "replace x", sleep=clock.sleep, clock=clock.monotonic,
                                     platform="win32") == "done"
    assert action.calls == 4 and clock.delays == pytest.approx([0.005, 0.01, 0.02])


@pytest.mark.parametrize(("platform", "winerror"), [("linux", 32), ("darwin", 32), ("win32", 1224)])
def test_other_systems_and_other_errors_keep_the_short_bound(platform, winerror):
    clock = FakeTime()
    with pytest.raises(AtomicWriteError):
        retry_on_permission_error(Refusing(10**9, winerror), "replace x", sleep=clock.sleep, clock=clock.monotonic,
                                  platform=platform)
    assert clock.delays == pytest.approx(backoff(2.0)) and sum(clock.delays) == pytest.approx(1.915)


def test_the_windows_thread_marked_short_gives_up_after_two_seconds():
    """The window marks its UI thread (app.main.run_app): a held file fails there in 2 s, never freezes it 10 s;
    another thread of the same process still waits the long bound."""
    files.keep_retries_short()
    clock = FakeTime()
    with pytest.raises(AtomicWriteError):
        retry_on_permission_error(Refusing(10**9), "replace x", sleep=clock.sleep, clock=clock.monotonic,
                                  platform="win32")
    assert sum(clock.delays) == pytest.approx(1.915)
    other = FakeTime()

    def elsewhere() -> None:
        with pytest.raises(AtomicWriteError):
            retry_on_permission_error(Refusing(10**9), "replace x", sleep=other.sleep, clock=other.monotonic,
                                      platform="win32")

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert sum(other.delays) == pytest.approx(9.915)


def windows_here(monkeypatch) -> FakeTime:
    """core.util.files sees Windows and a clock its sleeps move; os.replace refuses with a sharing violation."""
    clock = FakeTime()
    monkeypatch.setattr(files, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep))
    monkeypatch.setattr(files, "sys", SimpleNamespace(platform="win32"))
    monkeypatch.setattr(files.os, "replace", Refusing(10**9))
    return clock


def test_a_status_write_that_gives_up_names_the_file_the_holders_and_the_runs_folder_to_exclude(runs_dir,
                                                                                               monkeypatch):
    run = make_run(runs_dir, {"algo": "PPO"})
    clock = windows_here(monkeypatch)
    with pytest.raises(AtomicWriteError) as caught:
        write_status(run, state="running")
    message = str(caught.value)
    status = RunDir(run).status
    assert message == (
        f"cannot replace {status}: another program keeps it open ({SHARING_VIOLATION}; tried for 9.9 s): an "
        "antivirus scanning it (Windows Defender scans every new checkpoint) or a sync client (OneDrive, Dropbox) "
        "uploading it; exclude the folder from Defender's scans (in an administrator PowerShell: Add-MpPreference "
        f'-ExclusionPath "{runs_dir}"), or move the runs folder out of a synced folder, then try again')
    assert sum(clock.delays) == pytest.approx(9.915)
    assert read_json(status)["state"] == "queued"  # the old file intact, no temp file left
    assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]


def test_a_checkpoint_that_cannot_be_replaced_fails_its_save_naming_the_runs_folder(runs_dir, monkeypatch):
    from stable_baselines3 import PPO

    from core.worker.checkpoints import Checkpointer, CheckpointError

    run = make_run(runs_dir, {"algo": "PPO"})
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, device="cpu")
    checkpointer = Checkpointer(run, keep=2)
    windows_here(monkeypatch)
    with pytest.raises(CheckpointError) as caught:
        checkpointer.save(model)
    message = str(caught.value)
    assert f"cannot replace {RunDir(run).checkpoint_file(0, 'model')}" in message
    assert f'Add-MpPreference -ExclusionPath "{runs_dir}"' in message and "Windows Defender" in message
    assert list(RunDir(run).checkpoints.iterdir()) == []  # nothing half-written is left


def test_a_file_outside_a_run_names_its_own_folder(tmp_path, monkeypatch):
    windows_here(monkeypatch)
    target = tmp_path / "exports" / "policy.onnx.json"
    target.parent.mkdir()
    with pytest.raises(AtomicWriteError, match=f'-ExclusionPath "{target.parent}"'):
        write_json_atomic(target, {})


def test_the_run_folder_files_it_looks_for_are_the_layouts():
    layout = RunDir("r")
    assert files.RUN_FOLDER_FILES == (layout.config.name, layout.status.name)


def test_off_windows_the_give_up_says_what_it_said_before(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "RETRY_BOUND_S", 0.02)
    monkeypatch.setattr(files.os, "replace", Refusing(10**9))
    with pytest.raises(AtomicWriteError) as caught:
        write_json_atomic(tmp_path / "a.json", {})
    assert "another program keeps it open" in str(caught.value) and "Add-MpPreference" not in str(caught.value)
    assert os.listdir(tmp_path) == []
