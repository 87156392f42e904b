"""The run store and files: ids, torn lines, crash detection, the lock, platform decisions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from core.config.validate import validate_config
from core.run.lock import RunLock
from core.run.status import read_status, write_status
from core.run.store import RunStore
from core.util.jsonl import JsonlReader, JsonlWriter, read_jsonl, tail_jsonl
from core.util.procs import detach_popen_kwargs, effective_start_method


def test_torn_last_line_keeps_every_earlier_record(tmp_path):
    path = tmp_path / "metrics.jsonl"
    good = [{"kind": "episode", "step": i, "reward": float(i)} for i in range(50)]
    path.write_text("".join(json.dumps(r) + "\n" for r in good) + '{"kind": "episode", "st')
    assert read_jsonl(path) == good
    assert tail_jsonl(path, max_bytes=300)[-1] == good[-1]
    reader = JsonlReader(path)
    assert reader.read_new() == good
    with open(path, "a", encoding="utf-8") as fh:  # the writer finishes the line later
        fh.write('ep": 50, "reward": 1.0}\n')
    assert reader.read_new() == [{"kind": "episode", "step": 50, "reward": 1.0}]


def test_incremental_reader_skips_garbage_and_counts_it(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"a": 1}\nnot json\n{"a": 2}\n')
    reader = JsonlReader(path)
    assert reader.read_new() == [{"a": 1}, {"a": 2}] and reader.skipped == 1
    assert reader.read_new() == []


def test_writer_repairs_a_torn_tail_before_appending(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"a": 1}\n{"a": 2')
    writer = JsonlWriter(path)
    writer.write([{"a": 3}])
    writer.close()
    assert read_jsonl(path) == [{"a": 1}, {"a": 3}]


def test_run_ids_are_sanitised_and_unique(runs_dir):
    store = RunStore(runs_dir)
    cfg = validate_config({"name": "../../etc/passwd night run", "env": {"entry_point": "my.pkg:Weird"}}).config
    a, b = store.create(cfg), store.create(cfg)
    assert a.parent == runs_dir and b.parent == runs_dir and a != b
    assert "etc-passwd-night-run" in a.name and "weird" in a.name
    assert store.path(a.name) == a
    with pytest.raises(KeyError):
        store.path("../x")
    assert [i.id for i in store.list()][0] in (a.name, b.name)


def test_dead_worker_reads_as_crashed(runs_dir):
    run = RunStore(runs_dir).create(validate_config({}).config)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_status(run, state="running", pid=dead.pid, pid_create_time=0.0)
    status = read_status(run)
    assert status.state == "crashed" and status.recorded_state == "running"
    write_status(run, state="running", pid=os.getpid(), pid_create_time=None)
    assert read_status(run).state == "running"


def test_lock_admits_one_writer_and_the_os_frees_a_killed_holders(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from core.run.lock import RunLock; lock = RunLock(sys.argv[1]); "
                               "lock.acquire(); "
                               "print('locked', flush=True); time.sleep(60)",
                               str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RuntimeError, match="already being written by another process"):
            RunLock(tmp_path).acquire()
    finally:
        holder.kill()  # killed mid-run: no release, no cleanup
        holder.wait()
    lock = RunLock(tmp_path)
    lock.acquire()  # the OS dropped the dead holder's lock
    with pytest.raises(RuntimeError):
        RunLock(tmp_path).acquire()  # held now by this process's lock: a second writer is refused
    lock.release()
    again = RunLock(tmp_path)
    again.acquire()
    again.release()


def test_windows_decisions():
    kwargs = detach_popen_kwargs("win32")
    # CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW | CREATE_BREAKAWAY_FROM_JOB
    assert "start_new_session" not in kwargs and kwargs["creationflags"] == 0x00000200 | 0x08000000 | 0x01000000
    assert detach_popen_kwargs("win32", breakaway=False)["creationflags"] == 0x00000200 | 0x08000000
    assert detach_popen_kwargs("linux") == {"start_new_session": True}
    assert effective_start_method("forkserver", "win32") == (
        "spawn", "start_method forkserver does not exist on Windows; using spawn")
    assert effective_start_method("forkserver", "linux") == ("forkserver", None)
