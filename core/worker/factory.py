"""Build the vectorised env and the SB3 model from a ``RunConfig``.

Imported only by the worker (and tests): this is where torch and stable-baselines3 come in (and, for an SBX run,
``core.worker.sbx_engine``'s jax).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch as th
from stable_baselines3 import HerReplayBuffer
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import EvalCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise
from stable_baselines3.common.preprocessing import is_image_space
from stable_baselines3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecFrameStack, VecNormalize

from core.config import sb3_args
from core.config.algorithms.contrib import contrib_installed, missing_text
from core.config.algorithms.off_policy import ActionNoiseParams, OffPolicyParams, ReplayParams
from core.config.algorithms.spec import AlgoSpec
from core.config.errors import ConfigError
from core.config.fields import field_meta
from core.config.sb3_args import require_spec
from core.config.schema import EnvSpec, RunConfig, policy_switched, resolved, return_gamma
from core.envproc.recipe import EnvRecipe
from core.estimate.device import device_issue
from core.estimate.device import train_device as planned_device
from core.util.imports import load_object
from core.util.procs import effective_start_method
from core.worker.lean_vec_env import LeanSubprocVecEnv

ACTIVATION_FNS = {"tanh": th.nn.Tanh, "relu": th.nn.ReLU, "elu": th.nn.ELU, "leaky_relu": th.nn.LeakyReLU,
                  "gelu": th.nn.GELU, "silu": th.nn.SiLU}


def load_wrapper(name: str) -> Any:
    """A wrapper class by its dotted name (user code may run: the worker only)."""
    module, _, cls = name.rpartition(".")
    return load_object(f"{module}:{cls}")


def env_maker(spec: EnvSpec) -> Callable[..., gym.Env]:
    """A callable that creates one env: a gymnasium id, or an entry point imported here."""
    if spec.entry_point:
        cls = load_object(spec.entry_point)
        return lambda **kw: cls(**{**spec.kwargs, **kw})
    env_id = spec.id or ""
    return lambda **kw: gym.make(env_id, **{**spec.kwargs, **kw})


class InfoKeysDefault(gym.Wrapper):
    """Inside SB3's Monitor: an ``env.info_keys`` key the env did not report at an episode's end is
    NaN (Monitor's ``info_keywords`` would raise KeyError and fail the run); the record leaves it out."""

    def __init__(self, env: gym.Env, keys: tuple[str, ...]):
        super().__init__(env)
        self.keys = keys

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            for key in self.keys:
                info.setdefault(key, float("nan"))
        return obs, reward, terminated, truncated, info


def wrapper_function(spec: EnvSpec) -> Callable[[gym.Env], gym.Env] | None:
    """The env's wrappers, innermost first, as one callable for ``make_vec_env`` (``None``: none)."""
    if not spec.wrappers:
        return None
    classes = [(load_wrapper(w.name), dict(w.kwargs)) for w in spec.wrappers]

    def wrap(env: gym.Env) -> gym.Env:
        for cls, kwargs in classes:
            env = cls(env, **kwargs)
        return env

    return wrap


def build_vec_env(cfg: RunConfig, monitor_dir: Path | None = None, n_envs: int | None = None,
                  seed_offset: int = 0, force_dummy: bool = False, append_monitor: bool = False,
                  on_replaced: Callable[[int, str], None] | None = None,
                  replace_hung: bool = True) -> tuple[VecEnv, list[str]]:
    """The vectorised, Monitor-wrapped env (with its wrappers and frame stack); returns it and notes.

    ``vec_env``: ``dummy`` (in this process), ``subproc`` (``LeanSubprocVecEnv``: env processes
    without torch) or ``subproc-sb3`` (SB3's ``SubprocVecEnv``). ``append_monitor`` continues the
    Monitor CSVs of an earlier attempt (SB3 then writes no header). The lean env processes keep
    ``env.step_timeout_s`` and call ``on_replaced(index, reason)`` for each env process they replace
    (``replace_hung`` False: raise ``EnvStepTimeout`` instead, for the agent tools).
    """
    rt = cfg.runtime
    notes: list[str] = []
    count = n_envs or rt.n_envs
    seed = None if rt.seed is None else rt.seed + seed_offset
    keys = tuple(cfg.env.info_keys)
    monitor_kwargs: dict[str, Any] = {"info_keywords": keys}
    if monitor_dir:
        monitor_kwargs["override_existing"] = not append_monitor
    kind = "dummy" if force_dummy else rt.vec_env
    env: VecEnv
    if kind == "subproc":
        method, note = effective_start_method(rt.start_method, sys.platform)
        notes.extend([note] if note else [])
        # the lean env's Monitor leaves a measure the env did not report as NaN itself (no torch-side wrapper there)
        env = LeanSubprocVecEnv(env_recipes(cfg.env, count, seed, monitor_dir, monitor_kwargs), start_method=method,
                                step_timeout_s=cfg.env.step_timeout_s, on_replaced=on_replaced,
                                replace_hung=replace_hung)
        env.seed(seed)  # as make_vec_env: env i resets first with seed + i (a random seed when None)
    else:
        vec_cls: type[DummyVecEnv] | type[SubprocVecEnv] = DummyVecEnv
        vec_kwargs: dict[str, Any] = {}
        if kind == "subproc-sb3":
            method, note = effective_start_method(rt.start_method, sys.platform)
            notes.extend([note] if note else [])
            vec_cls, vec_kwargs = SubprocVecEnv, {"start_method": method}
        make = env_maker(cfg.env)
        env = make_vec_env(
            (lambda: InfoKeysDefault(make(), keys)) if keys else (lambda: make()), n_envs=count, seed=seed,
            vec_env_cls=vec_cls, vec_env_kwargs=vec_kwargs, monitor_dir=str(monitor_dir) if monitor_dir else None,
            wrapper_class=wrapper_function(cfg.env), monitor_kwargs=monitor_kwargs)
    if cfg.env.frame_stack:
        env = VecFrameStack(env, cfg.env.frame_stack)
    return env, notes


def env_recipes(spec: EnvSpec, n_envs: int, seed: int | None, monitor_dir: Path | None,
                monitor_kwargs: dict[str, Any]) -> list[EnvRecipe]:
    """What each lean env process builds: the same env, seeds, Monitor files and wrappers as ``make_vec_env``."""
    wrappers = tuple((w.name, dict(w.kwargs)) for w in spec.wrappers)
    return [EnvRecipe(env_id=spec.id, entry_point=spec.entry_point, kwargs=dict(spec.kwargs), wrappers=wrappers, rank=rank,
                      seed=seed, monitor_dir=str(monitor_dir) if monitor_dir else None, monitor_kwargs=monitor_kwargs)
            for rank in range(n_envs)]


def wrap_normalize(cfg: RunConfig, env: VecEnv, training: bool = True) -> VecEnv:
    norm = cfg.runtime.normalize
    if not (norm.obs or norm.reward):
        return env
    gamma = norm.gamma if norm.gamma is not None else return_gamma(cfg)
    return VecNormalize(env, norm_obs=norm.obs, norm_reward=norm.reward and training, training=training, gamma=gamma,
                        clip_obs=norm.clip_obs, clip_reward=norm.clip_reward, norm_obs_keys=norm.norm_obs_keys)


OPTIMIZERS: dict[str, Any] = {"adam": th.optim.Adam, "adamw": th.optim.AdamW, "rmsprop": th.optim.RMSprop,
                              "rmsprop_tf_like": RMSpropTFLike, "sgd": th.optim.SGD}


def policy_kwargs(cfg: RunConfig) -> dict[str, Any]:
    """SB3's ``policy_kwargs`` (``core.config.sb3_args.policy_kwargs``) with the names made torch classes (an SBX run's:
    flax and optax, ``core.worker.sbx_engine``); an algorithm that builds its own optimizer unless given a class
    (``AlgoSpec.own_optimizer``: A2C's RMSprop, QR-DQN's Adam eps) gets it as a class beside optimizer_kwargs."""
    if cfg.runtime.engine == "sbx":
        from core.worker.sbx_engine import policy_kwargs as sbx_policy_kwargs  # jax: for an SBX run only (SBX_IMPORTS)

        return sbx_policy_kwargs(cfg)
    out = sb3_args.policy_kwargs(cfg)
    if "activation_fn" in out:  # not in ARS's LinearPolicy
        out["activation_fn"] = ACTIVATION_FNS[out["activation_fn"]]
    if "features_extractor_class" in out:  # the user's own network (trusted before launch; imported here)
        out["features_extractor_class"] = load_code(out["features_extractor_class"], "policy.features_extractor")
    own = cfg.spec.own_optimizer if cfg.spec is not None else None
    if "optimizer_kwargs" in out and "optimizer_class" not in out and own is not None:
        optimizer = own(cfg.params, out["optimizer_kwargs"])
        if optimizer is not None:
            out["optimizer_class"], out["optimizer_kwargs"] = optimizer
    if "optimizer_class" in out:
        out["optimizer_class"] = OPTIMIZERS[out["optimizer_class"]]
    return out


def schedule(value: Any) -> Any:
    """A constant stays; ``{schedule: linear, start, end}`` becomes SB3's ``LinearSchedule`` (picklable)."""
    if isinstance(value, dict) and value.get("schedule") == "linear":
        return LinearSchedule(float(value["start"]), float(value["end"]), 1.0)
    return value


def model_kwargs(cfg: RunConfig, env: VecEnv | None = None) -> dict[str, Any]:
    """The constructor arguments of the SB3 algorithm (``core.config.sb3_args.algo_kwargs``: the fields SB3 takes,
    schedules made SB3's), the policy's, and the replay buffer and action noise the section describes."""
    spec = require_spec(cfg)
    return _model_kwargs(cfg, spec, env)


def _model_kwargs(cfg: RunConfig, spec: AlgoSpec, env: VecEnv | None) -> dict[str, Any]:
    params = {name: schedule(value) if field_meta(spec.params, name).schedule else value
              for name, value in sb3_args.algo_kwargs(cfg).items()}
    if isinstance(params.get("train_freq"), list):
        params["train_freq"] = tuple(params["train_freq"])  # (n, "episode")
    kwargs: dict[str, Any] = {**params, "policy_kwargs": policy_kwargs(cfg), "seed": cfg.runtime.seed}
    p = cfg.params
    if isinstance(p, OffPolicyParams) and p.optimize_memory_usage:  # SB3 cannot combine it with timeout handling
        kwargs["replay_buffer_kwargs"] = {"handle_timeout_termination": False}
    if isinstance(p, ReplayParams) and p.replay_buffer == "her":
        kwargs.update(replay_buffer_class=HerReplayBuffer, replay_buffer_kwargs={
            "n_sampled_goal": p.her_n_sampled_goal, "goal_selection_strategy": p.her_goal_selection_strategy})
    if isinstance(p, ActionNoiseParams) and p.action_noise != "none" and env is not None:
        kwargs["action_noise"] = action_noise(p.action_noise, p.action_noise_std, env)
    if cfg.runtime.engine == "sbx":
        from core.worker.sbx_engine import model_kwargs as sbx_model_kwargs  # SBX_IMPORTS

        return sbx_model_kwargs(cfg, kwargs)
    return kwargs


def action_noise(kind: str, std: float, env: VecEnv) -> Any:
    n = int(np.prod(env.action_space.shape or (1,)))
    cls = NormalActionNoise if kind == "normal" else OrnsteinUhlenbeckActionNoise
    return cls(mean=np.zeros(n), sigma=std * np.ones(n))


def load_code(ref: str, field: str) -> Any:
    """The class ``ref`` ('module:Class') of the user's own network; an import that fails says which field names it."""
    try:
        return load_object(ref)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{field}: cannot import {ref} ({type(exc).__name__}: {exc}); the module must be in the run's "
                         "import folder (env.path, the folder rlpanel was started from) or installed") from exc


def policy_name(cfg: RunConfig, spec: AlgoSpec, env: VecEnv) -> str | type[Any]:
    """The SB3 policy: the user's own class (``policy.class``), the config's kind, or chosen from the observations
    (images: CnnPolicy; dicts: MultiInputPolicy)."""
    if cfg.policy.policy_class:
        cls: type[Any] = load_code(cfg.policy.policy_class, "policy.class")
        return cls
    if spec.policy_switch is not None and policy_switched(cfg):
        return spec.policy_switch[0]  # ARS's LinearPolicy
    return spec.sb3_policy(policy_kind(cfg, env))  # RecurrentPPO: MlpPolicy -> MlpLstmPolicy


def policy_kind(cfg: RunConfig, env: VecEnv) -> str:
    """The config's ``policy.kind``, or the one the observations call for (images: CnnPolicy; dicts: MultiInputPolicy)."""
    kind = cfg.policy.kind
    if kind != "auto":
        return str(kind)
    obs = env.observation_space
    if isinstance(obs, gym.spaces.Dict):
        return "MultiInputPolicy"
    return "CnnPolicy" if is_image_space(obs) else "MlpPolicy"


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if th.cuda.is_available() else "cpu"
    return device


# SBX_IMPORTS: core.worker.sbx_engine is imported inside the functions that serve an SBX run: it loads jax
# (seconds, and XLA's own threads), which an SB3 run never needs.
SBX_TORCH_SIDE = "cpu"  # SBX's SB3 side (its buffers, converted to numpy) stays on torch's CPU device; JAX places the nets


@dataclass(frozen=True)
class WorkerDevice:
    """Where a worker trains, decided once (``worker_device``): ``train`` as status.json, the Monitor's title and the
    estimate name it (``cuda:0``, ``cpu``: torch's, or JAX's for an SBX run); ``torch`` the device torch builds the
    model on (the CPU for SBX's SB3 side)."""

    train: str
    torch: str


def worker_device(cfg: RunConfig) -> WorkerDevice:
    """The estimate's device plan (``core.estimate.device.train_device``, the one rule) from this process's own torch, or
    JAX's device for an SBX run; a CUDA device the library lacks is refused naming ``runtime.device`` and the fix."""
    if cfg.runtime.engine == "sbx":
        from core.worker.sbx_engine import jax_device  # SBX_IMPORTS

        return WorkerDevice(jax_device(cfg.runtime.device), SBX_TORCH_SIDE)
    facts = {"torch": th.__version__, "cuda_available": th.cuda.is_available()}  # what the probe tells the estimate
    issue = device_issue(cfg, facts)
    if issue is not None:
        raise ConfigError([issue])
    device, _ = planned_device(cfg, None, facts)
    return WorkerDevice(device, device)


def placement_note(device: WorkerDevice, model: BaseAlgorithm) -> str | None:
    """What differs between the plan and the device torch really put the model on (a warning), or None."""
    got = str(model.device)
    if got == device.torch:
        return None
    return f"planned to train on {device.torch}, but the model is on {got}: the run trains there"


def model_device(cfg: RunConfig, device: str) -> str:
    """The torch device a model is built on: ``device`` resolved (a worker's is already: ``WorkerDevice.torch``), or
    the CPU for SBX's SB3 side."""
    return SBX_TORCH_SIDE if cfg.runtime.engine == "sbx" else resolve_device(device)


def train_device(cfg: RunConfig) -> str:
    """The device the run really trains on (``WorkerDevice.train``), for a caller that holds only the config."""
    return worker_device(cfg).train


def algorithm_class(cfg: RunConfig, spec: AlgoSpec) -> type[BaseAlgorithm]:
    """The SB3 class named by the algorithm's table (``stable_baselines3:PPO``, ``sb3_contrib:TQC``), or SBX's."""
    if cfg.runtime.engine == "sbx":
        from core.worker.sbx_engine import algorithm_class as sbx_class  # SBX_IMPORTS

        return sbx_class(cfg)
    try:
        cls: type[BaseAlgorithm] = load_object(spec.sb3_class)
    except ImportError as exc:
        if spec.contrib and not contrib_installed():
            raise ValueError(missing_text(spec.name)) from exc
        raise
    return cls


def eval_callback_class(cfg: RunConfig) -> type[EvalCallback]:
    """SB3's EvalCallback, or sb3-contrib's masked one for MaskablePPO (evaluation takes only valid actions too)."""
    if cfg.spec is not None and cfg.spec.needs_action_masks:
        cls: type[EvalCallback] = load_object("sb3_contrib.common.maskable.callbacks:MaskableEvalCallback")
        return cls
    return EvalCallback


def check_action_masks(cfg: RunConfig, spec: AlgoSpec, env: VecEnv) -> None:
    """MaskablePPO samples only the actions ``action_masks()`` allows: an env without one is refused with the fix."""
    if not spec.needs_action_masks:
        return
    if not env.has_attr("action_masks"):
        raise ValueError(f"{cfg.algo} needs an env with an action_masks() method (a bool array: which actions are valid "
                         f"now); {cfg.env.label} has none: add one to the env (or a wrapper), or use PPO")


@dataclass(frozen=True)
class Sb3Args:
    """Everything SB3 gets for one config, decided once (``build``): the algorithm's class, its policy (a name or the
    user's own class) and the constructor's keyword arguments."""

    algorithm: type[BaseAlgorithm]
    policy: str | type[Any]
    kwargs: dict[str, Any]


def build(cfg: RunConfig, env: VecEnv) -> Sb3Args:
    """What SB3 gets for ``cfg`` on ``env``, its 'auto' values resolved once: what ``build_model`` builds, and what
    ``core.worker.measure`` builds on torch's meta device."""
    spec = require_spec(cfg)
    cfg = resolved(cfg)
    cls = algorithm_class(cfg, spec)
    check_action_masks(cfg, spec, env)
    kind = policy_name(cfg, spec, env)
    if cfg.policy.kind == "auto" and policy_kind(cfg, env) == "CnnPolicy":  # resolved_net_arch needs to know
        cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(update={"kind": "CnnPolicy"})})
    return Sb3Args(cls, kind, _model_kwargs(cfg, spec, env))


def build_model(cfg: RunConfig, env: VecEnv, device: str = "auto", tensorboard_log: str | None = None) -> BaseAlgorithm:
    args = build(cfg, env)
    return args.algorithm(args.policy, env, device=model_device(cfg, device), verbose=0, tensorboard_log=tensorboard_log,
                          **args.kwargs)


def load_model(cfg: RunConfig, path: Path | io.BufferedIOBase, env: VecEnv, device: str = "auto") -> BaseAlgorithm:
    """The model saved at ``path`` (a file, or its bytes already read: ``core.run.checkpoint_read``) on ``env``."""
    spec = require_spec(cfg)
    cls = algorithm_class(cfg, spec)
    check_action_masks(cfg, spec, env)
    return cls.load(path if isinstance(path, io.BufferedIOBase) else str(path), env=env, device=model_device(cfg, device))
