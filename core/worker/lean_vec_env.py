"""``LeanSubprocVecEnv``: SB3's ``SubprocVecEnv`` whose env processes import neither torch nor SB3.

SB3's worker function lives in stable-baselines3, so each of its env processes imports SB3 and
torch to unpickle it (~150 MiB of its own memory per env, and on Windows the CUDA libraries
committed per process). Ours runs ``core.envproc.worker.serve``: the env process holds python,
numpy, gymnasium and the env. Same VecEnv API and semantics as SB3's (auto-reset with
``terminal_observation`` and ``TimeLimit.truncated``, seeds and options at reset, env_method,
get_attr, set_attr, env_is_wrapped, render, close); an error in an env process is raised here as
``EnvProcessError`` naming the env, and a process that dies is reported instead of hanging. An env whose
step passes ``step_timeout_s``, or that another thread asks to restart, is replaced by a fresh process
(``core.worker.env_replacement``). ``bench/env_memory.py`` compares the two. See docs/processes.md.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import sys
import types
import warnings
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn
from stable_baselines3.common.vec_env.subproc_vec_env import _stack_obs

from core.envproc.monitor import EpisodeMonitor
from core.envproc.worker import EnvFailure, serve
from core.worker.env_replacement import FAILED, EnvProcessError, EnvReplacement, EnvsAborted, PipeEnded, end_process

# Imported once by the forkserver and shared, copy-on-write, by every env process it forks.
FORKSERVER_PRELOAD = ["numpy", "gymnasium", "cloudpickle", "core.envproc.worker", "core.envproc.recipe"]


__all__ = ["EnvProcessError", "EnvsAborted", "LeanSubprocVecEnv"]


def forkserver_preload() -> list[str]:
    """What the forkserver imports once, for every env process it forks to share: ours, and the modules the
    main module imported when it runs with ``-m`` (``python -m core.worker.main``). multiprocessing runs
    such a main module again in each env process as ``__mp_main__``; with its imports already loaded that
    costs a few pages instead of a few MiB per env. (A main script is preloaded by multiprocessing itself.)"""
    main = sys.modules["__main__"]
    name = getattr(main.__spec__, "name", None)
    if not name or name.endswith("__main__"):
        return ["__main__", *FORKSERVER_PRELOAD]
    imported = set()
    for value in vars(main).values():
        module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        if isinstance(module, str) and module in sys.modules and module != name and not module.startswith("__"):
            imported.add(module)
    return [*FORKSERVER_PRELOAD, *sorted(imported - set(FORKSERVER_PRELOAD))]


def exit_words(code: int | None) -> str:
    """A process's exit code as words: a negative one is the signal that ended it (SIGKILL: often out of memory)."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (", perhaps out of memory" if name == "SIGKILL" else "")
    return f"exit code {code}"


def default_start_method() -> str:
    """SB3's choice: forkserver where it exists, else spawn."""
    return "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"


class LeanSubprocVecEnv(EnvReplacement, VecEnv):
    """One process per env, running ``core.envproc.worker``; a drop-in for SB3's ``SubprocVecEnv``.

    ``step_timeout_s``: an env whose step answers later is replaced (``None``: steps may take any time);
    ``on_replaced(index, reason)`` is called, in the stepping thread, after each replacement; ``replace_hung``
    False: such a step raises ``EnvStepTimeout`` instead (an agent tool's play, where a cut episode would count).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], start_method: str | None = None,
                 names: Sequence[str] | None = None, step_timeout_s: float | None = None,
                 on_replaced: Callable[[int, str], None] | None = None, replace_hung: bool = True):
        self.waiting = False
        self.closed = False
        n_envs = len(env_fns)
        self.names = list(names) if names is not None else [getattr(fn, "name", "env") for fn in env_fns]
        self.env_fns = list(env_fns)  # a replaced env's process is started from its own again
        start_method = start_method or default_start_method()
        self._ctx = mp.get_context(start_method)
        if start_method == "forkserver":
            self._ctx.set_forkserver_preload(forkserver_preload())  # no effect once this process's forkserver runs
        self.remotes: list[Connection] = []
        self.processes: list[BaseProcess] = []
        self._init_replacement(n_envs, step_timeout_s, on_replaced, replace_hung)
        try:
            for env_fn in env_fns:
                remote, process = self._start(env_fn)
                self.remotes.append(remote)
                self.processes.append(process)
            spaces = self._ask_all("get_spaces", None, range(n_envs))
        except BaseException:
            self._send_close()
            self._end_processes()
            raise
        observation_space, action_space = spaces[0]
        super().__init__(n_envs, observation_space, action_space)

    def _start(self, env_fn: Callable[[], Any]) -> tuple[Connection, BaseProcess]:
        """A new env process building ``env_fn``'s env, and our end of its pipe."""
        remote, work_remote = self._ctx.Pipe()
        process = self._ctx.Process(  # type: ignore[attr-defined]
            target=serve, args=(work_remote, remote, cloudpickle.dumps(env_fn)), daemon=True)
        try:
            process.start()
        finally:
            work_remote.close()
        return remote, process

    # the pipes --------------------------------------------------------------------------------

    def _label(self, index: int) -> str:
        return f"env {index} ({self.names[index]}, pid {self.processes[index].pid})"

    def _error(self, index: int, cmd: str, answer: EnvFailure | PipeEnded) -> Exception:
        """What env ``index``'s failed answer to ``cmd`` raises here: its error, or the end of its process."""
        if self.aborted is not None:
            return self._aborted_error()
        if isinstance(answer, PipeEnded):
            process = self.processes[index]
            process.join(timeout=5)
            error = EnvProcessError(f"{self._label(index)} ended during {cmd} ({exit_words(process.exitcode)}): its "
                                    "process died; see the worker log for the env's own output")
            error.__cause__ = answer.error
            return error
        text = answer.text
        last = text.strip().splitlines()[-1] if text.strip() else "an error"
        what = "could not be made" if answer.kind == "make" else f"failed during {cmd}"
        message = f"{self._label(index)} {what}: {last}\nthe env process's traceback:\n{text}"
        return AttributeError(message) if answer.kind == "attribute" else EnvProcessError(message)

    def _recv_all(self, indices: Sequence[int], cmd: str) -> list[Any]:
        """The answers of envs ``indices``. Every answer is read, so the pipes stay in step, before the first
        error is raised (an ``EnvFailure`` from the env, or the pipe of a process that ended)."""
        answers: list[Any] = []
        failed: int | None = None
        remotes = self.remotes
        for index in indices:  # a step's hot loop: kept as lean as SB3's list of recv() (bench/env_pipe_cost.py)
            try:
                answer = remotes[index].recv()
            except (EOFError, OSError) as exc:
                answer = PipeEnded(exc)
            if type(answer) in FAILED and failed is None:
                failed = len(answers)
            answers.append(answer)
        if failed is not None:
            raise self._error(indices[failed], cmd, answers[failed])
        return answers

    def _ask_all(self, cmd: str, data: Any, indices: VecEnvIndices = None) -> list[Any]:
        targets = list(indices if isinstance(indices, range) else self._get_indices(indices))
        for index in targets:
            self.remotes[index].send((cmd, data))
        return self._recv_all(targets, cmd)

    # the VecEnv API ---------------------------------------------------------------------------

    def _recv_step(self) -> tuple[list[Any], bool]:
        """The step's answers, in order, however long they take (no limit: kept as lean as SB3's list of recv())."""
        answers: list[Any] = []
        trouble = False
        for index, remote in enumerate(self.remotes):
            self.reading = index  # for restart_envs from another thread: the envs from here on are outstanding
            try:
                answer = remote.recv()
            except (EOFError, OSError) as exc:
                answer = PipeEnded(exc)
            if type(answer) in FAILED:
                trouble = True
            answers.append(answer)
        return answers, trouble

    # the VecEnv API ---------------------------------------------------------------------------

    def step_async(self, actions: np.ndarray) -> None:
        marked = self._marked_now()  # restart_envs' envs: their processes end now, and step_wait replaces them
        for index, (remote, action) in enumerate(zip(self.remotes, actions, strict=True)):
            if marked and index in marked:
                continue
            try:
                remote.send(("step", action))
            except OSError:
                pass  # its process has ended: step_wait reads the pipe's end and says so

    def step_wait(self) -> VecEnvStepReturn:
        try:
            limit = self.step_timeout_s
            answers, trouble = self._recv_step() if limit is None else self._recv_step_within(limit)
            if trouble:
                answers = self._settle(answers)  # replaced envs' slots become truncated episodes, or the error is raised
        finally:
            self.waiting = False
        obs, rews, dones, infos, self.reset_infos = zip(*answers, strict=True)  # type: ignore[assignment]
        self.last_obs = obs
        rewards, done = np.stack(rews), np.stack(dones)
        self.tally.add(rewards, done, any(dones))
        return _stack_obs(obs, self.observation_space), rewards, done, infos  # type: ignore[return-value]

    def reset(self) -> VecEnvObs:
        for index, remote in enumerate(self.remotes):
            remote.send(("reset", (self._seeds[index], self._options[index])))
        results = self._recv_all(range(self.num_envs), "reset")
        obs, self.reset_infos = zip(*results, strict=True)  # type: ignore[assignment]
        self.last_obs = obs
        self.tally.restart()
        self._reset_seeds()
        self._reset_options()
        return _stack_obs(obs, self.observation_space)

    def close(self) -> None:
        if self.closed:
            return
        if self.waiting:
            for remote in self.remotes:
                try:
                    remote.recv()
                except (EOFError, OSError):
                    pass
        self._send_close()
        self._end_processes()
        self.closed = True

    def _send_close(self) -> None:
        for remote in self.remotes:
            try:
                remote.send(("close", None))
            except OSError:
                pass  # that env's process has already ended

    def _end_processes(self) -> None:
        """Join every env process (a stuck one is killed: they ignore SIGTERM), then close our ends of the pipes."""
        for process in self.processes:
            process.join(timeout=30)
            if process.is_alive():
                end_process(process)
        for remote in self.remotes:
            remote.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            warnings.warn(f"The render mode is {self.render_mode}, but this method assumes it is `rgb_array` "
                          "to obtain images.", stacklevel=2)
            return [None for _ in self.remotes]
        return self._ask_all("render", None)

    def has_attr(self, attr_name: str) -> bool:
        return all(self._ask_all("has_attr", attr_name))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return self._ask_all("get_attr", attr_name, indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._ask_all("set_attr", (attr_name, value), indices)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any) -> list[Any]:
        return self._ask_all("env_method", (method_name, method_args, method_kwargs), indices)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """SB3's ``Monitor`` is asked as our ``EpisodeMonitor``, its stand-in in the env processes (no SB3 there)."""
        if wrapper_class is Monitor:
            wrapper_class = EpisodeMonitor
        return self._ask_all("is_wrapped", wrapper_class, indices)
