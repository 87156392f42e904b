"""The progress watchdog: a thread in the worker that notices when training takes no step (issue 28).

A stalled run looks alive: its worker runs, its lock is held, its status says ``running``, and an
env process waits for ever on an HTTP call that never answers. The ``RunRecorder`` stamps each
step (``beat``, one clock read it already makes) and keeps the longest pause between two steps
(``longest_gap``: a PPO update, an evaluation, a checkpoint). This thread looks every few
seconds; past the stall limit (``runtime.stall_after_s``, or 5x the longest pause and at least
5 minutes) it writes a ``stalled`` event naming the last step and how long ago, sets ``stalled``
in ``status.json`` (readers then see the state ``stalled``), sends the ``stalled``
notification, and does what ``runtime.on_stall`` says:

- ``alert``: nothing more;
- ``restart-envs``: the lean env processes are replaced (their episodes cut short and recorded as
  such: ``LeanSubprocVecEnv.restart_envs``) and training goes on; envs in the worker process
  (``vec_env: dummy``) cannot be replaced, so that run is only alerted;
- ``stop``: a graceful stop is asked for (the training thread checkpoints and stops when it
  comes back; the lean env processes are ended so that it does), and a training thread that
  still has not come back after the stall limit (at most ``STOP_GRACE_S``) is given up: the run is recorded ``stopped``
  here, resumable from its newest checkpoint, and the worker process ends.

When steps come again, an event says so and ``stalled`` is cleared (at the latest when training ends: its last steps
may all come between two looks). A GPU guard's pause is no stall.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from core.notify.run_events import notify_run_event
from core.run import records
from core.run.layout import RunDir
from core.run.reached import resume_by_hand
from core.run.status import write_status
from core.util.jsonl import JsonlWriter
from core.util.text import format_age

STALL_FLOOR_S = 300.0  # the auto limit is never shorter than this
STALL_FACTOR = 5.0  # the auto limit: this many times the longest pause between two steps seen so far
STOP_GRACE_S = 60.0  # on_stall stop: the most the training thread has to come back and stop with a checkpoint
ANNOUNCE_GROWTH = 1.2  # the limit in status.json is rewritten when it grows by this factor


class Beats(Protocol):
    """What the watchdog reads of the training thread (``core.worker.callbacks.RunRecorder``)."""

    beat: float  # time.monotonic() of the last step
    longest_gap: float  # the longest pause between two steps so far


def stall_limit(configured: float | None, longest_gap: float) -> float | None:
    """The stall limit in seconds: the configured one, None when it is 0 (off), else the auto one."""
    if configured == 0:
        return None
    if configured:
        return float(configured)
    return max(STALL_FLOOR_S, STALL_FACTOR * longest_gap)


def lean_envs(env: Any) -> Any | None:
    """The ``LeanSubprocVecEnv`` under the run's wrappers (VecNormalize, VecFrameStack), or None."""
    seen = 0
    while env is not None and seen < 16:
        if hasattr(env, "restart_envs") and hasattr(env, "abort"):
            return env
        env, seen = getattr(env, "venv", None), seen + 1
    return None


class StallWatch:
    """The watchdog thread of one attempt: ``start()``, then ``stop()`` when training has ended."""

    def __init__(self, run_dir: Path, out: JsonlWriter, beats: Beats, step: Callable[[], int], *,
                 configured: float | None, action: str, env: Any = None, ask_stop: Callable[[str], None] | None = None,
                 paused: Callable[[], bool] = lambda: False, notify: bool = True,
                 exit_process: Callable[[int], None] = os._exit):
        self.run_dir = Path(run_dir)
        self.out = out
        self.beats = beats
        self.step = step
        self.configured = configured
        self.action = action
        self.env = env
        self.ask_stop = ask_stop
        self.paused = paused
        self.notify = notify
        self.exit_process = exit_process
        self.announced: float | None = None
        self.stalled_at: float | None = None  # the beat the stall was found after
        self.gap_before = 0.0  # the longest pause before the stall: a stall is not the run's normal pause
        self.stalls = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rlpanel-stall-watch", daemon=True)

    def start(self) -> StallWatch:
        self._announce(stall_limit(self.configured, self.beats.longest_gap))
        self._thread.start()
        return self

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)
        if self.stalled_at is not None and self.beats.beat > self.stalled_at and not self._thread.is_alive():
            self._recovered(self.beats.beat)  # steps came again, and training ended before the next look

    def _loop(self) -> None:
        while not self._done.wait(self._interval()):
            self.check(time.monotonic())

    def _interval(self) -> float:
        limit = stall_limit(self.configured, self.beats.longest_gap)
        return 5.0 if limit is None else min(5.0, max(0.2, limit / 10))

    # --- one look ------------------------------------------------------------------------------

    def check(self, now: float) -> None:
        """Compare the last step's time with the limit; fire once per stall, and clear it when steps come again."""
        beat = self.beats.beat
        if self.stalled_at is not None:
            if beat > self.stalled_at:
                self._recovered(beat)
            return
        limit = stall_limit(self.configured, self.beats.longest_gap)
        if limit is None or self.paused():
            return
        if self.announced is None or limit > self.announced * ANNOUNCE_GROWTH:
            self._announce(limit)
        silent = now - beat
        if silent > limit:
            self._stalled(beat, silent, limit)

    def _announce(self, limit: float | None) -> None:
        self.announced = limit
        if limit is not None:
            write_status(self.run_dir, stall_limit_s=round(limit, 1))

    def _event(self, message: str, level: str, code: str) -> None:
        self.out.write([records.event(message, level, self.step(), code=code)])
        print(records.event_echo(level, message), flush=True)

    def _stalled(self, beat: float, silent: float, limit: float) -> None:
        self.stalled_at, self.gap_before = beat, self.beats.longest_gap
        self.stalls += 1
        step = self.step()
        source = "runtime.stall_after_s" if self.configured else "auto: 5x the longest pause between steps, at least 5 min"
        finding = (f"no step for {format_age(silent)} since step {step:,} (the stall limit is {format_age(limit)}, "
                   f"{source}); {self._what_follows()}")
        self._event(f"stalled: {finding}", "warning", "stalled")
        write_status(self.run_dir, stalled={"since": time.time() - silent, "step": step, "limit_s": round(limit, 1),
                                            "action": self.action})
        if self.notify:
            notify_run_event(self.run_dir, "stalled", finding, in_background=True)
        if self.action == "restart-envs":
            self._restart_envs(step)
        elif self.action == "stop":
            self._stop(step, limit)

    def _what_follows(self) -> str:
        if self.action == "restart-envs":
            if lean_envs(self.env) is None:
                return ("on_stall is restart-envs, but this run's envs live in the worker process (runtime.vec_env: "
                        "dummy), so they cannot be replaced: stop or resume the run by hand")
            return "replacing the env processes (runtime.on_stall: restart-envs); their episodes are cut short"
        if self.action == "stop":
            return "stopping it with a checkpoint (runtime.on_stall: stop)"
        return "nothing else is done (runtime.on_stall: alert): stop it, or set on_stall to restart-envs or stop"

    def _restart_envs(self, step: int) -> None:
        lean = lean_envs(self.env)
        if lean is not None:
            lean.restart_envs(f"the run stalled at step {step:,} (runtime.on_stall: restart-envs)")

    def _stop(self, step: int, limit: float) -> None:
        reason = f"stalled at step {step:,}"
        if self.ask_stop is not None:
            self.ask_stop(reason)
        lean = lean_envs(self.env)
        if lean is not None:  # a training thread waiting on an env process comes back at once
            lean.abort(f"the run stalled at step {step:,} (runtime.on_stall: stop)")
        grace = min(STOP_GRACE_S, limit)
        if self._done.wait(grace):
            return  # training came back and stopped itself, with a checkpoint
        self._give_up(step, grace)

    def _give_up(self, step: int, grace: float) -> None:
        """The training thread did not come back: record the run stopped, resumable from its newest checkpoint, and
        end the worker process (its env processes with it)."""
        reason = (f"stalled at step {step:,} and the training thread did not come back within {grace:g} s of "
                  f"the stop (runtime.on_stall: stop): the worker ended; {resume_by_hand(self.run_dir)}")
        self._event(reason, "error", "stall_stop")
        write_status(self.run_dir, state="stopped", exit_reason=reason, ended_at=time.time(), stalled=None)
        RunDir(self.run_dir).stop_request.unlink(missing_ok=True)
        _end_children()
        self.exit_process(0)

    def _recovered(self, beat: float) -> None:
        silent = beat - (self.stalled_at or beat)
        self.stalled_at = None
        self.beats.longest_gap = self.gap_before  # the stall's pause must not raise the auto limit
        self._event(f"steps again at step {self.step():,} after {format_age(silent)} without one", "info",
                    "stall_over")
        write_status(self.run_dir, stalled=None)


def _end_children() -> None:
    """End this process's children (SB3's env processes under ``subproc-sb3``) before the worker exits."""
    import psutil

    for child in psutil.Process().children(recursive=True):
        try:
            child.kill()
        except psutil.Error:
            pass
