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
