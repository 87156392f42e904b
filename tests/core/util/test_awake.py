"""Keeping the machine awake during a run: Windows through a recording kernel32, Linux for real."""

from __future__ import annotations

import os
import shutil

import psutil
import pytest

from core.util.awake import ES_CONTINUOUS, ES_SYSTEM_REQUIRED, KeepAwake, inhibitor_command


class Kernel32:
    """SetThreadExecutionState as Windows answers it: the previous state, or 0 on failure."""

    def __init__(self, fails: bool = False):
        self.calls: list[int] = []
        self.fails = fails

    def SetThreadExecutionState(self, flags: int) -> int:  # noqa: N802 (the Win32 name)
        self.calls.append(flags)
        return 0 if self.fails else ES_CONTINUOUS


def test_windows_asks_for_the_system_and_releases_it_when_the_run_ends():
    kernel32 = Kernel32()
    with KeepAwake("rlpanel run x", platform="win32", kernel32=kernel32) as awake:
        assert awake.active and kernel32.calls == [ES_CONTINUOUS | ES_SYSTEM_REQUIRED]
        assert "SetThreadExecutionState" in awake.note
    assert not awake.active and kernel32.calls == [ES_CONTINUOUS | ES_SYSTEM_REQUIRED, ES_CONTINUOUS]


def test_windows_refusal_is_said_and_nothing_is_released():
    kernel32 = Kernel32(fails=True)
    with KeepAwake("x", platform="win32", kernel32=kernel32) as awake:
        assert not awake.active and awake.note.startswith(
            "could not keep the machine awake (SetThreadExecutionState failed): the machine may go to sleep during the run")
    assert kernel32.calls == [ES_CONTINUOUS | ES_SYSTEM_REQUIRED]


def test_off_and_missing_tools_are_said():
    assert "keep awake is off" in KeepAwake("x", enabled=False).start().note
    awake = KeepAwake("x", platform="linux", which=lambda name: None).start()
    assert not awake.active and "systemd-inhibit is not installed" in awake.note
    assert "caffeinate is not installed" in KeepAwake("x", platform="darwin", which=lambda name: None).start().note


def test_the_inhibitor_ends_with_the_worker():
    assert inhibitor_command("darwin", 42, "x", which=lambda n: f"/usr/bin/{n}") == ["/usr/bin/caffeinate", "-i", "-w", "42"]
    cmd = inhibitor_command("linux", 42, "rlpanel run x", which=lambda n: f"/usr/bin/{n}")
    assert cmd == ["/usr/bin/systemd-inhibit", "--what=sleep:idle", "--who=rlpanel", "--why=rlpanel run x", "--mode=block",
                   "/usr/bin/tail", "--pid=42", "-f", "/dev/null"]


def test_a_holding_inhibitor_lives_while_the_run_trains_and_goes_after(tmp_path):
    # stands in for systemd-inhibit where there is no system bus: drops its options, runs the command
    fake = tmp_path / "systemd-inhibit"
    fake.write_text('#!/bin/sh\nwhile [ "${1#--}" != "$1" ]; do shift; done\nexec "$@"\n')
    fake.chmod(0o755)
    which = lambda name: str(fake) if name == "systemd-inhibit" else shutil.which(name)  # noqa: E731
    with KeepAwake("x", platform="linux", which=which) as awake:
        assert awake.active and awake.note.endswith("(systemd-inhibit)")
        proc = awake._proc
        assert proc is not None and proc.poll() is None
        assert psutil.Process(proc.pid).cmdline()[-4:] == [shutil.which("tail"), f"--pid={os.getpid()}", "-f", "/dev/null"]
    assert proc.poll() is not None and not awake.active


def test_the_real_systemd_inhibit_here_holds_or_says_why():
    if shutil.which("systemd-inhibit") is None:
        pytest.skip("no systemd-inhibit here")
    awake = KeepAwake("rlpanel test").start()
    try:
        if not awake.active:  # e.g. a container without a system bus
            assert awake.note.startswith("could not keep the machine awake (systemd-inhibit: ")
            assert awake.note.endswith("turn off automatic sleep in the system's power settings while it trains")
    finally:
        awake.release()
