"""The worker's opt-out of Windows power throttling (EcoQoS), through a kernel32 that records each call.

The structure handed to SetProcessInformation is read back field by field: what Windows would receive. No Windows
machine ran this; the call's form follows Microsoft's SetProcessInformation example.
"""

from __future__ import annotations

import ctypes
import signal
from functools import partial

from core.run.status import read_status
from core.util.power_throttling import ThrottlingState, opt_out

CURRENT_PROCESS = -1  # GetCurrentProcess's pseudo-handle


class Kernel32:
    """SetProcessInformation's arguments as Windows would read them; ``answers``: what each call returns."""

    def __init__(self, *answers: int):
        self.answers, self.calls = list(answers), []

    def GetCurrentProcess(self):  # noqa: N802 (the Windows API's name)
        return CURRENT_PROCESS

    def SetProcessInformation(self, handle, info_class, state, size):  # noqa: N802
        s = state.contents
        self.calls.append((handle, info_class, s.Version, s.ControlMask, s.StateMask, size))
        return self.answers.pop(0)


def test_it_declines_execution_speed_and_timer_throttling_in_one_call():
    k = Kernel32(1)
    note = opt_out("win32", k)
    assert k.calls == [(CURRENT_PROCESS, 4, 1, 0x1 | 0x4, 0, 12)]  # ProcessPowerThrottling, version 1, both off
    assert ctypes.sizeof(ThrottlingState) == 12  # three ULONGs, as processthreadsapi.h declares it
    assert note.startswith("Windows power throttling (EcoQoS) is off for this process")


def test_a_windows_that_refuses_the_timer_bit_gets_execution_speed_alone():
    k = Kernel32(0, 1)  # Windows 10 knows no IGNORE_TIMER_RESOLUTION
    assert opt_out("win32", k).startswith("Windows power throttling (EcoQoS) is off")
    assert [c[3] for c in k.calls] == [0x5, 0x1] and all(c[4] == 0 for c in k.calls)


def test_a_failure_is_a_line_never_an_exception():
    note = opt_out("win32", Kernel32(0, 0))
    assert note.startswith("could not opt out of Windows power throttling (SetProcessInformation failed")
    assert note.endswith("Windows may slow this run while it trains in the background or on battery")

    class Windows7:  # kernel32 without SetProcessInformation
        def GetCurrentProcess(self):  # noqa: N802
            return CURRENT_PROCESS

    assert "SetProcessInformation could not be called" in opt_out("win32", Windows7())


def test_off_windows_nothing_is_called():
    k = Kernel32()
    assert opt_out("linux", k) is None and opt_out("darwin", k) is None and k.calls == []
    assert opt_out() is None  # this machine (Linux): the real call is never tried


def _worker_main(run_dir, monkeypatch, kernel32):
    """The worker's main in this process, on a run folder with no config (it fails at once, after the opt-out)."""
    import core.worker.main as worker

    monkeypatch.setattr(worker, "opt_out", partial(opt_out, "win32", kernel32))
    before = signal.getsignal(signal.SIGTERM)
    try:
        return worker.main([str(run_dir)])
    finally:
        signal.signal(signal.SIGTERM, before)  # main installs its own for the worker process


def test_the_worker_opts_out_first_and_says_so_in_its_log(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    k = Kernel32(1)
    assert _worker_main(run_dir, monkeypatch, k) == 1
    assert len(k.calls) == 1
    out = capsys.readouterr().out
    assert "worker: Windows power throttling (EcoQoS) is off for this process" in out


def test_a_worker_whose_opt_out_fails_says_so_and_goes_on(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assert _worker_main(run_dir, monkeypatch, Kernel32(0, 0)) == 1
    assert "worker: could not opt out of Windows power throttling" in capsys.readouterr().err
    status = read_status(run_dir)
    assert "power throttling" not in (status.exit_reason or "")  # it failed on the missing config, not on this
    assert "throttl" not in status.failure_kind


def test_an_env_process_opts_out_too(monkeypatch):
    """``serve`` (the lean env process's main) in this process: its close is already in the pipe."""
    import multiprocessing as mp

    import cloudpickle
    import gymnasium as gym

    import core.envproc.worker as envproc

    k = Kernel32(1)
    monkeypatch.setattr(envproc, "opt_out", partial(opt_out, "win32", k))
    parent, child = mp.Pipe()
    parent.send(("close", None))
    before = signal.getsignal(signal.SIGTERM)
    try:
        envproc.serve(child, parent, cloudpickle.dumps(lambda: gym.make("CartPole-v1")))
    finally:
        signal.signal(signal.SIGTERM, before)
    assert [c[3] for c in k.calls] == [0x5]
