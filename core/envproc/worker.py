"""The loop of one env process: build the env from its recipe, then answer the parent's commands.

The commands and their answers are SB3's ``SubprocVecEnv`` worker's (step with auto-reset,
reset with seed and options, render, get_spaces, env_method, get_attr, has_attr, set_attr,
is_wrapped, close). An answer is SB3's own, bare; an exception in the env comes back as an
``EnvFailure`` (its kind and traceback) instead of ending the process, and the parent raises it
naming the env. Bare answers keep the pipe's per-step cost SB3's: a tag on every answer cost
~1 us per env step, parent and env process together (measured here). This module imports no
torch and no stable-baselines3.
"""

from __future__ import annotations

import signal
import traceback
from multiprocessing.connection import Connection
from typing import Any, NamedTuple

import cloudpickle
import gymnasium as gym

from core.util.power_throttling import opt_out


class EnvFailure(NamedTuple):
    """The answer of a command that raised: ``make`` (the env could not be made), ``attribute`` or ``error``,
    and the env process's traceback. No env's own answer is one: the class lives here."""

    kind: str
    text: str


def is_wrapped(env: gym.Env[Any, Any], wrapper_class: type) -> bool:
    """Whether ``wrapper_class`` is among the env's wrappers (SB3's ``env_util.is_wrapped``)."""
    current: Any = env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, wrapper_class):
            return True
        current = current.env
    return False


def step(env: gym.Env[Any, Any], action: Any) -> tuple[Any, Any, bool, dict[str, Any], dict[str, Any]]:
    """One step in SB3's VecEnv terms: ``done``, ``TimeLimit.truncated``, and a reset with the terminal obs kept."""
    observation, reward, terminated, truncated, info = env.step(action)
    done = terminated or truncated
    info["TimeLimit.truncated"] = truncated and not terminated
    reset_info: dict[str, Any] = {}
    if done:
        info["terminal_observation"] = observation
        observation, reset_info = env.reset()
    return observation, reward, done, info, reset_info


def answer(env: gym.Env[Any, Any], cmd: str, data: Any) -> Any:
    """The reply to one command (``close`` is handled by the loop)."""
    if cmd == "step":
        return step(env, data)
    if cmd == "reset":
        seed, options = data
        return env.reset(seed=seed, **({"options": options} if options else {}))
    if cmd == "render":
        return env.render()
    if cmd == "get_spaces":
        return env.observation_space, env.action_space
    if cmd == "env_method":
        name, args, kwargs = data
        return env.get_wrapper_attr(name)(*args, **kwargs)
    if cmd == "get_attr":
        return env.get_wrapper_attr(data)
    if cmd == "has_attr":
        try:
            env.get_wrapper_attr(data)
        except AttributeError:
            return False
        return True
    if cmd == "set_attr":
        setattr(env, data[0], data[1])
        return None
    if cmd == "is_wrapped":
        return is_wrapped(env, data)
    raise NotImplementedError(f"`{cmd}` is not implemented in the env process")


def failure(exc: BaseException, making: bool = False) -> EnvFailure:
    """The error answer: its kind (``make``: the env could not be made; ``attribute``; ``error``) and traceback."""
    kind = "make" if making else "attribute" if isinstance(exc, AttributeError) else "error"
    text = "".join(traceback.format_exception(exc, chain=kind != "attribute"))  # gymnasium chains one per wrapper
    return EnvFailure(kind, text.strip())


def serve(remote: Connection, parent_remote: Connection, recipe: bytes) -> None:
    """The env process's main function: ``recipe`` is the cloudpickled callable that makes the env.

    SIGTERM is ignored here: one sent to the whole tree (Ray's stop of a job, a kill of a process
    group) is meant for the worker, whose graceful stop still steps these envs to its checkpoint and
    then closes them; an env process ends on ``close`` or when the worker's end of the pipe goes.
    """
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    opt_out()  # Windows: out of power throttling like the worker (its note would only repeat the worker's)
    parent_remote.close()
    try:
        env = cloudpickle.loads(recipe)()
    except Exception as exc:  # noqa: BLE001 - the parent raises it, naming the env
        remote.send(failure(exc, making=True))
        remote.close()
        return
    while True:
        try:
            cmd, data = remote.recv()
            if cmd == "close":
                env.close()
                remote.close()
                break
            try:
                reply: Any = step(env, data) if cmd == "step" else answer(env, cmd, data)
                remote.send(reply)
            except Exception as exc:  # noqa: BLE001 - an env error is an answer, not the end of this process
                remote.send(failure(exc))
        except (EOFError, KeyboardInterrupt, BrokenPipeError):
            break
