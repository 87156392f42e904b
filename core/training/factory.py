"""Build the vectorised env and the SB3 model from a ``RunConfig``.

Imported only by the worker (and tests): this is where torch and stable-baselines3 come in.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch as th
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecNormalize

from core.config.algorithms.spec import AlgoSpec
from core.config.schema import EnvSpec, RunConfig, resolved_activation, resolved_net_arch
from core.util.imports import load_object
from core.util.procs import effective_start_method

ACTIVATION_FNS = {"tanh": th.nn.Tanh, "relu": th.nn.ReLU, "elu": th.nn.ELU, "leaky_relu": th.nn.LeakyReLU,
                  "gelu": th.nn.GELU, "silu": th.nn.SiLU}


def env_maker(spec: EnvSpec) -> Callable[..., gym.Env]:
    """A callable that creates one env: a gymnasium id, or an entry point imported here."""
    if spec.entry_point:
        cls = load_object(spec.entry_point)
        return lambda **kw: cls(**{**spec.kwargs, **kw})
    env_id = spec.id or ""
    return lambda **kw: gym.make(env_id, **{**spec.kwargs, **kw})


def build_vec_env(cfg: RunConfig, monitor_dir: Path | None = None, n_envs: int | None = None,
                  seed_offset: int = 0, force_dummy: bool = False, append_monitor: bool = False) -> tuple[VecEnv, list[str]]:
    """The vectorised, Monitor-wrapped env; returns it and notes about choices made.

    ``append_monitor`` continues the Monitor CSVs of an earlier attempt (SB3 then writes no header).
    """
    rt = cfg.runtime
    notes: list[str] = []
    vec_cls: type[DummyVecEnv] | type[SubprocVecEnv] = DummyVecEnv
    vec_kwargs: dict[str, Any] = {}
    if rt.vec_env == "subproc" and not force_dummy:
        method, note = effective_start_method(rt.start_method, sys.platform)
        if note:
            notes.append(note)
        vec_cls, vec_kwargs = SubprocVecEnv, {"start_method": method}
    seed = None if rt.seed is None else rt.seed + seed_offset
    make = env_maker(cfg.env)
    env = make_vec_env(
        lambda: make(), n_envs=n_envs or rt.n_envs, seed=seed, vec_env_cls=vec_cls, vec_env_kwargs=vec_kwargs,
        monitor_dir=str(monitor_dir) if monitor_dir else None,
        monitor_kwargs={"override_existing": not append_monitor} if monitor_dir else None)
    return env, notes


def wrap_normalize(cfg: RunConfig, env: VecEnv, training: bool = True) -> VecEnv:
    norm = cfg.runtime.normalize
    if not (norm.obs or norm.reward):
        return env
    return VecNormalize(env, norm_obs=norm.obs, norm_reward=norm.reward and training, training=training,
                        gamma=getattr(cfg.params, "gamma", 0.99))


def policy_kwargs(cfg: RunConfig) -> dict[str, Any]:
    arch = resolved_net_arch(cfg)
    net_arch: Any = arch["qf"] if require_spec(cfg).network == "q_network" else arch
    return {"net_arch": net_arch, "activation_fn": ACTIVATION_FNS[resolved_activation(cfg)]}


def model_kwargs(cfg: RunConfig) -> dict[str, Any]:
    """The constructor arguments of the SB3 algorithm, from the chosen section of the config."""
    params = cfg.params.model_dump()
    params.pop("auto_batch_cap", None)
    optimize = params.pop("optimize_memory_usage", False)
    kwargs: dict[str, Any] = {**params, "policy_kwargs": policy_kwargs(cfg), "seed": cfg.runtime.seed}
    if not require_spec(cfg).on_policy and optimize:
        # SB3 cannot combine the memory-optimised buffer with timeout handling
        kwargs.update(optimize_memory_usage=True, replay_buffer_kwargs={"handle_timeout_termination": False})
    return kwargs


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if th.cuda.is_available() else "cpu"
    return device


def device_label(device: str) -> str:
    """The device the model lands on, with its index (``cuda`` -> ``cuda:0``): what status.json says."""
    if device == "cuda" and th.cuda.is_available():
        return f"cuda:{th.cuda.current_device()}"
    return device


def require_spec(cfg: RunConfig) -> AlgoSpec:
    """The algorithm's table; a baseline has no model to build."""
    if cfg.spec is None:
        raise ValueError(f"{cfg.algo} is a baseline: it has no model to build")
    return cfg.spec


def algorithm_class(cfg: RunConfig) -> type[BaseAlgorithm]:
    """The SB3 class named by the algorithm's table (``stable_baselines3:PPO``)."""
    cls: type[BaseAlgorithm] = load_object(require_spec(cfg).sb3_class)
    return cls


def build_model(cfg: RunConfig, env: VecEnv, device: str = "auto", tensorboard_log: str | None = None) -> BaseAlgorithm:
    cls = algorithm_class(cfg)
    return cls("MlpPolicy", env, device=resolve_device(device), verbose=0, tensorboard_log=tensorboard_log,
               **model_kwargs(cfg))


def load_model(cfg: RunConfig, path: Path, env: VecEnv, device: str = "auto") -> BaseAlgorithm:
    cls = algorithm_class(cfg)
    return cls.load(str(path), env=env, device=resolve_device(device))
