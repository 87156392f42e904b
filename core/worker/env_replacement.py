"""Replacing a lean env process mid-run: a step past ``env.step_timeout_s``, or another thread's ``restart_envs``.

``LeanSubprocVecEnv`` takes this part from ``EnvReplacement``. A replaced env's episode ends there as SB3 ends a
truncated one: ``done``, ``TimeLimit.truncated``, the last observation the env returned as
``terminal_observation``, the fresh process's reset observation as the next one, ``info["episode"]`` (r, l, t)
from the parent's own running tally (the env process that kept the Monitor's is gone), and
``info["rlpanel.truncated"]`` with the reason, which the episode record keeps. The other envs' answers of that
step are used as they are.

Env processes ignore SIGTERM (``core.envproc.worker.serve``: a SIGTERM to the tree is the worker's graceful
stop), so a process is ended with SIGKILL (``Process.kill``; TerminateProcess on Windows): a hung step would
ignore the polite signal anyway. ``restart_envs`` and ``abort`` only send it, from any thread; the main thread,
blocked in ``step_wait``, then reads the pipe's end and replaces the env (or raises ``EnvsAborted``).

An agent tool (evaluate, record, watch, export's check) plays with ``replace_hung=False``: a cut episode would be
counted as a short one, so a step past the limit ends the play with ``EnvStepTimeout`` naming the field instead.
"""

from __future__ import annotations

import math
import select
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, NamedTuple, cast

import numpy as np

from core.envproc.recipe import EnvRecipe
from core.envproc.worker import EnvFailure

TRUNCATED_KEY = "rlpanel.truncated"  # info key of a cut-short episode: why (RunRecorder keeps it in the record)
RESET_WAIT_S = 60.0  # a fresh env process's making and first reset may take this long (or the step limit, if longer)


class EnvProcessError(RuntimeError):
    """An env process failed: which env, doing what, and its traceback."""


class EnvsAborted(EnvProcessError):
    """``abort``: every env process was ended on purpose, and why."""


class EnvStepTimeout(TimeoutError):
    """A step past ``env.step_timeout_s`` where the env is not replaced (an agent tool): which env, and the fix."""


class PipeEnded(NamedTuple):
    """In place of an answer: the pipe of an env process that ended (an env's own answer may be an exception)."""

    error: BaseException


FAILED = (EnvFailure, PipeEnded)  # the answers that raise (exact types: cheaper than isinstance per answer)
NO_ANSWER = PipeEnded(TimeoutError("no answer within the step time limit"))  # a slot the limit ran out on


def timeout_reason(limit_s: float) -> str:
    return f"env step took longer than {limit_s:g} s (env.step_timeout_s); its process was replaced"


def signal_end(process: BaseProcess) -> None:
    """SIGKILL (TerminateProcess on Windows), from any thread: the process ignores SIGTERM by design."""
    try:
        process.kill()
    except (OSError, ValueError):  # it has ended already, or was closed
        pass


def end_process(process: BaseProcess) -> None:
    """Kill and reap (the main thread's part: a reap from two threads could lose the exit code)."""
    signal_end(process)
    process.join(timeout=5)


def continued(env_fn: Callable[[], Any]) -> Callable[[], Any]:
    """What a replacement process builds: the same env, its Monitor CSV continued rather than started over."""
    if isinstance(env_fn, EnvRecipe) and env_fn.monitor_dir is not None:
        return replace(env_fn, monitor_kwargs={**env_fn.monitor_kwargs, "override_existing": False})
    return env_fn


class EpisodeTally:
    """Each env's running return and length, kept by the parent for an episode whose env process is replaced.

    One numpy operation a step for all envs (the returns) and a count: the lengths are the steps since each
    episode's first, and the masks run only on a step where an episode ended (a numpy op costs ~1 us here,
    ``dones.any()`` more than a Python ``any`` over the answers' few bools).
    """

    def __init__(self, n_envs: int) -> None:
        self.returns = np.zeros(n_envs)
        self.steps = 0
        self.first_step = np.zeros(n_envs, dtype=np.int64)  # each episode's start, in steps of this vec env
        self.started_s = np.full(n_envs, time.time())  # the Monitor's t counts from its env's making

    def add(self, rewards: np.ndarray, dones: np.ndarray, any_done: bool) -> None:
        self.returns += rewards
        self.steps += 1
        if any_done:
            self.returns[dones] = 0.0
            self.first_step[dones] = self.steps

    def restart(self) -> None:
        self.returns[:] = 0.0
        self.first_step[:] = self.steps

    def cut(self, index: int) -> dict[str, Any]:
        """The Monitor's ``{r, l, t}`` of env ``index``'s episode, cut short now; its fresh env counts t from now."""
        now = time.time()
        episode = {"r": round(float(self.returns[index]), 6), "l": int(self.steps - self.first_step[index]),
                   "t": round(now - float(self.started_s[index]), 6)}
        self.started_s[index] = now
        return episode


class EnvReplacement:
    """The replacing half of ``LeanSubprocVecEnv``: the step wait with a limit, ``restart_envs``, ``abort``."""

    # the host's (LeanSubprocVecEnv's)
    num_envs: int
    waiting: bool
    closed: bool
    remotes: list[Connection]
    processes: list[BaseProcess]
    env_fns: list[Callable[[], Any]]
    _start: Callable[[Callable[[], Any]], tuple[Connection, BaseProcess]]
    _error: Callable[[int, str, Any], Exception]
    _label: Callable[[int], str]

    def _init_replacement(self, n_envs: int, step_timeout_s: float | None,
                          on_replaced: Callable[[int, str], None] | None, replace_hung: bool = True) -> None:
        self.step_timeout_s = step_timeout_s
        self.replace_hung = replace_hung  # False: a step past the limit raises EnvStepTimeout (an agent tool's play)
        self.on_replaced = on_replaced  # (env index, reason), in the thread that steps
        self.tally = EpisodeTally(n_envs)
        self.last_obs: tuple[Any, ...] = (None,) * n_envs  # what each env returned last: a cut episode's terminal obs
        self.lock = threading.Lock()
        self.marks: dict[int, str] = {}  # envs to replace, and why (restart_envs)
        self.aborted: str | None = None
        self.reading = 0  # the env whose answer the plain step wait reads now (the ones before it have answered)
        self.answers_so_far: list[Any] | None = None  # the limited step wait's (NO_ANSWER: outstanding)
        self.poller: Any = None  # select.poll over the pipes, made again when one is replaced
        self.poll_fds: dict[int, int] = {}

    # asked from another thread ------------------------------------------------------------------

    def restart_envs(self, reason: str, indices: Sequence[int] | None = None) -> list[int]:
        """Replace envs ``indices`` (default: those whose answer to the step in flight is outstanding, or all when
        none is in flight), ending their episodes as truncated with ``reason``. Safe from any thread: with a step
        in flight their processes are killed now and ``step_wait`` replaces them; else at the next step."""
        with self.lock:
            if self.closed:
                return []
            if indices is not None:
                targets = sorted({int(i) for i in indices})
            elif self.waiting and (answers := self.answers_so_far) is not None:
                targets = [index for index, answer in enumerate(answers) if answer is NO_ANSWER]
            elif self.waiting:
                targets = list(range(self.reading, self.num_envs))
            else:
                targets = list(range(self.num_envs))
            for index in targets:
                self.marks[index] = reason
                if self.waiting:
                    signal_end(self.processes[index])
        return targets

    def abort(self, reason: str) -> None:
        """End every env process: a ``step_wait`` blocked now, and every later call, raises ``EnvsAborted(reason)``."""
        with self.lock:
            self.aborted = reason
            for process in self.processes:
                signal_end(process)

    def _aborted_error(self) -> EnvsAborted:
        return EnvsAborted(f"the env processes were ended: {self.aborted}")

    # the main thread's part -----------------------------------------------------------------------

    def _marked_now(self) -> tuple[int, ...]:
        """At a step's start: the marked envs, whose processes end now (the step replaces them)."""
        with self.lock:
            self.waiting = True
            marked = tuple(self.marks)
            for index in marked:
                signal_end(self.processes[index])
        return marked

    def _ready(self, answers: list[Any], timeout_s: float) -> list[int]:
        """The envs whose pipes have something to read within ``timeout_s``. A ``select.poll`` kept across steps
        costs ~1.5 us a call for 8 pipes; ``multiprocessing.connection.wait`` builds a selector each time (~21 us:
        measured here), so it serves only where there is no poll (Windows)."""
        if not hasattr(select, "poll"):
            pending = {self.remotes[i]: i for i, answer in enumerate(answers) if answer is NO_ANSWER}
            return [pending[c] for c in cast(list[Connection], wait(list(pending), timeout_s))]
        if self.poller is None:
            self.poller = select.poll()
            self.poll_fds = {}
            for index, remote in enumerate(self.remotes):
                self.poller.register(remote.fileno(), select.POLLIN)
                self.poll_fds[remote.fileno()] = index
        return [self.poll_fds[fd] for fd, _ in self.poller.poll(math.ceil(timeout_s * 1000))]

    def _recv_step_within(self, limit_s: float) -> tuple[list[Any], bool]:
        """The step's answers as they come, for at most ``limit_s``: ``NO_ANSWER`` where none came."""
        deadline = time.monotonic() + limit_s
        answers: list[Any] = [NO_ANSWER] * self.num_envs
        self.answers_so_far = answers  # restart_envs' outstanding envs
        left, trouble = self.num_envs, False
        while left:
            ready = self._ready(answers, max(deadline - time.monotonic(), 0.0))
            if not ready:
                trouble = True
                break
            for index in ready:
                if answers[index] is not NO_ANSWER:  # answered, then its process was ended (restart_envs)
                    self.poller.unregister(self.remotes[index].fileno())
                    self.poller = None  # in full again next step
                    continue
                try:
                    answer = self.remotes[index].recv()
                except (EOFError, OSError) as exc:
                    answer = PipeEnded(exc)
                trouble = trouble or type(answer) in FAILED
                answers[index] = answer
                left -= 1
        self.answers_so_far = None
        return answers, trouble

    def _settle(self, answers: list[Any]) -> list[Any]:
        """A step with a failed or missing answer: marked and timed-out envs replaced, else the first error raised."""
        if self.aborted is not None:
            raise self._aborted_error()
        missing: dict[int, str] = {}
        with self.lock:
            for index, answer in enumerate(answers):
                if answer is NO_ANSWER:
                    self.marks.pop(index, None)
                    missing[index] = timeout_reason(self.step_timeout_s or 0.0)
                elif type(answer) is PipeEnded and index in self.marks:
                    missing[index] = self.marks.pop(index)
        failed = next((i for i, a in enumerate(answers) if i not in missing and type(a) in FAILED), None)
        hung = [] if self.replace_hung else [i for i, a in enumerate(answers) if a is NO_ANSWER]
        if hung:
            for index in missing:  # nothing is replaced: the play ends here, no hung process left behind
                end_process(self.processes[index])
            limit = self.step_timeout_s or 0.0
            raise EnvStepTimeout(f"{self._label(hung[0])} took no step within {limit:g} s (env.step_timeout_s: {limit:g}): "
                                 "the env hangs or is slower than its limit, so the play stops here rather than wait "
                                 "for ever; fix the env, or raise env.step_timeout_s in the run's config.yaml if its "
                                 "steps are only slow")
        if failed is not None:
            for index in missing:  # the run ends here: no hung process is left behind
                end_process(self.processes[index])
            raise self._error(failed, "step", answers[failed])
        for index, reason in missing.items():
            answers[index] = self._replace(index, reason)
        if self.on_replaced is not None:
            for index, reason in missing.items():
                self.on_replaced(index, reason)
        return answers

    def _replace(self, index: int, reason: str) -> tuple[Any, ...]:
        """A fresh process for env ``index``, reset: its slot of the step is the old episode's truncated end."""
        end_process(self.processes[index])
        self.remotes[index].close()
        self.poller = None
        remote, process = self._start(continued(self.env_fns[index]))
        with self.lock:
            self.remotes[index], self.processes[index] = remote, process
            if self.aborted is not None:
                signal_end(process)
        try:
            remote.send(("reset", (None, None)))
        except OSError:
            pass  # it could not be made and has ended: its answer says why
        wait_s = max(self.step_timeout_s or 0.0, RESET_WAIT_S)
        if not remote.poll(wait_s):
            end_process(process)
            raise EnvProcessError(f"{self._label(index)} did not answer its first reset within {wait_s:g} s (a fresh env "
                                  f"process, started because: {reason})")
        try:
            answer = remote.recv()
        except (EOFError, OSError) as exc:
            answer = PipeEnded(exc)
        if self.aborted is not None:
            raise self._aborted_error()
        if type(answer) in FAILED:
            raise self._error(index, "reset", answer)
        obs, reset_info = answer
        info = {"TimeLimit.truncated": True, "terminal_observation": self.last_obs[index],
                "episode": self.tally.cut(index), TRUNCATED_KEY: reason}
        return obs, 0.0, True, info, reset_info
