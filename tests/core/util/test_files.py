"""Atomic replace and reads under Windows sharing violations, made to happen by failing os.replace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.queue.record import QueueState
from core.queue.runner import save_state
from core.queue.state import load_queue
from core.util import files
from core.util.files import AtomicWriteError, read_json, write_json_atomic


class SharingViolations:
    """``os.replace`` (or a read) that raises Windows' PermissionError ``times`` times, then works."""

    def __init__(self, real, times: int):
        self.real, self.left, self.calls = real, times, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.left:
            self.left -= 1
            raise PermissionError(13, "The process cannot access the file because it is being used by another process")
        return self.real(*args, **kwargs)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_replace_refused_a_few_times_is_retried(tmp_path, monkeypatch):
    target = tmp_path / "status.json"
    write_json_atomic(target, {"state": "running"})
    refused = SharingViolations(os.replace, 3)
    monkeypatch.setattr(files.os, "replace", refused)
    write_json_atomic(target, {"state": "finished"})
    assert refused.calls == 4 and read_json(target) == {"state": "finished"}
    assert leftovers(tmp_path) == []


def test_a_replace_refused_past_the_bound_gives_up_with_a_clear_error(tmp_path, monkeypatch):
    target = tmp_path / "status.json"
    write_json_atomic(target, {"state": "running"})
    monkeypatch.setattr(files, "RETRY_BOUND_S", 0.05)
    monkeypatch.setattr(files.os, "replace", SharingViolations(os.replace, 10**9))
    with pytest.raises(AtomicWriteError) as caught:
        write_json_atomic(target, {"state": "finished"})
    message = str(caught.value)
    assert f"cannot replace {target}" in message and "another program keeps it open" in message
    assert isinstance(caught.value, OSError) and isinstance(caught.value.__cause__, PermissionError)
    assert read_json(target) == {"state": "running"}  # the old file is intact, the temp file gone
    assert leftovers(tmp_path) == []


def test_a_read_refused_while_the_file_is_replaced_is_retried(tmp_path, monkeypatch):
    target = tmp_path / "status.json"
    write_json_atomic(target, {"state": "running"})
    refused = SharingViolations(Path.read_text, 2)
    monkeypatch.setattr(files.Path, "read_text", lambda path, *args, **kwargs: refused(path, *args, **kwargs))
    assert read_json(target) == {"state": "running"} and refused.calls == 3


def test_a_failed_queue_state_write_does_not_fail_the_queue(tmp_path, monkeypatch, capsys):
    real_replace = os.replace
    state = QueueState(id="q1", plan={}, state="running", jobs=[])
    assert save_state(tmp_path, state) is True
    monkeypatch.setattr(files, "RETRY_BOUND_S", 0.05)
    monkeypatch.setattr(files.os, "replace", SharingViolations(os.replace, 10**9))
    state.state = "finished"
    assert save_state(tmp_path, state) is False  # said, and left for the next pass
    assert "trying again next pass" in capsys.readouterr().err
    assert load_queue(tmp_path).state == "running"
    monkeypatch.setattr(files.os, "replace", real_replace)
    assert save_state(tmp_path, state) is True and load_queue(tmp_path).state == "finished"


def test_a_file_not_written_is_named_with_why_and_the_fix_never_as_its_temporary_name(tmp_path):
    """Issue 44: the line names the file the user asked for (a temp file's name told them nothing) and the fix."""
    import errno

    target = tmp_path / "agent.mp4"
    temp = str(tmp_path / ".agent.tmp-1.mp4")
    full = files.write_failed(target, OSError(errno.ENOSPC, "No space left on device", temp))
    assert str(full).startswith(f"no space left on device writing {target} (") and "free some space" in str(full)
    read_only = files.write_failed(target, OSError(errno.EROFS, "Read-only file system", temp))
    assert str(read_only) == f"cannot write {target}: Read-only file system; choose a folder you can write to"
    held = files.write_failed(target, AtomicWriteError("cannot replace x: another program keeps it open; close it"))
    assert str(held) == f"cannot write {target}: cannot replace x: another program keeps it open; close it"
    assert isinstance(full, OSError) and temp not in str(full) + str(read_only)


def test_the_probe_finds_what_a_write_meets_and_leaves_nothing(tmp_path, monkeypatch):
    assert files.probe_write(tmp_path) is None and list(tmp_path.iterdir()) == []
    assert isinstance(files.probe_write(tmp_path / "gone"), FileNotFoundError)

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files.os, "fsync", refused)
    assert files.probe_write(tmp_path).strerror == "Permission denied" and list(tmp_path.iterdir()) == []


def test_staged_bytes_are_whole_beside_the_file_before_they_get_its_name(tmp_path):
    target = tmp_path / "p.onnx"
    staged = files.stage_bytes(target, b"model")
    assert staged.parent == tmp_path and staged.read_bytes() == b"model" and not target.exists()
    os.replace(staged, target)
    assert target.read_bytes() == b"model" and oct(target.stat().st_mode & 0o777) == "0o644"
