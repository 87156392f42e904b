"""Load a run's checkpoint for use: the model, and a fresh env with the normalisation saved with that checkpoint.

The statistics come from the checkpoint's own ``_vecnormalize.pkl`` (never the run's latest ones:
the best model must be evaluated with the statistics it was evaluated with, rl_zoo3 #282), frozen
(``training=False``) and with rewards left unnormalised, so a reward is the env's own. The env is
the run's env with its wrappers and frame stack, in this process (``DummyVecEnv``), or in lean env processes when
the run sets ``env.step_timeout_s``: a step past it ends the play with ``EnvStepTimeout`` naming the field (an env
hanging in this process could not be stopped). The checkpoint's files are read whole first
(``core.run.checkpoint_read``: a run still training may prune them). A config that normalises observations must
find the checkpoint's statistics: played raw, a policy is misjudged (issue 44), so such a checkpoint is refused.
"""

from __future__ import annotations

import io
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from core.config.engines import JAX_FIX, sbx_installed
from core.config.schema import RunConfig
from core.estimate.xla import set_jax_env
from core.run.checkpoint_read import read_checkpoint
from core.run.checkpoints import BestCheckpoint, Checkpoint, complete_checkpoints
from core.run.layout import BEST_CHECKPOINT, CHECKPOINT_PARTS
from core.run.store import load_run_config
from core.worker.factory import build_vec_env, load_model


@dataclass
class LoadedPolicy:
    """A checkpoint ready to act: its model, its env (``close()`` it), the run's config and which checkpoint."""

    run_dir: Path
    cfg: RunConfig
    checkpoint: Checkpoint
    model: BaseAlgorithm
    env: VecEnv

    @property
    def normalize(self) -> VecNormalize | None:
        """The env's frozen VecNormalize (observation statistics of this checkpoint), if the run had one."""
        return self.env if isinstance(self.env, VecNormalize) else None

    def close(self) -> None:
        self.env.close()


def load_policy(run_dir: Path, which: str = "last", n_envs: int = 1, seed: int | None = None,
                render_mode: str | None = None, device: str = "cpu") -> LoadedPolicy:
    """The checkpoint ``which`` (``last``, ``best`` or a step) of ``run_dir`` on ``device``, with a fresh env.

    ``seed`` seeds the env (None: the run's own seed + 20,000, apart from training's and evaluation's);
    ``render_mode`` is passed to the env's constructor (``rgb_array`` to watch or record).
    Raises ``LookupError`` for a checkpoint the run does not keep, or without the statistics its config normalises
    observations with.
    """
    run_dir = Path(run_dir)
    read = read_checkpoint(run_dir, which)
    checkpoint = read.checkpoint
    cfg = load_run_config(run_dir)
    if cfg.runtime.engine == "sbx":
        prepare_jax(run_dir, device)
    stats = read.files.get("vecnormalize")
    if stats is None and cfg.runtime.normalize.obs:
        raise LookupError(missing_statistics(run_dir, checkpoint))
    cfg = _for_playing(cfg, n_envs, seed, render_mode)
    env, _ = build_vec_env(cfg, replace_hung=False)  # in this process, or env processes with a step time limit
    if stats is not None:
        env = _frozen(stats, env)
    try:
        model = load_model(cfg, io.BytesIO(read.files["model"]), env, device=device)
    except BaseException:
        env.close()
        raise
    # SB3's load seeds the env again with the seed the model trained with (set_random_seed): this one's first
    # reset is the one asked for, so a seed plays the same episodes as training's evaluation with that seed
    env.seed(cfg.runtime.seed)
    return LoadedPolicy(run_dir, cfg, checkpoint, model, env)


def prepare_jax(run_dir: Path, device: str) -> None:
    """An SBX run's checkpoint loads with sbx (JAX): said in one line where it is not installed; else JAX is set as the
    worker sets it (``set_jax_env``: no preallocation of the GPU's memory, only the CPU backend for the CPU) before
    jax loads, so a tool beside a training run neither takes 75 % of the card nor opens a CUDA context to play on the
    CPU."""
    if not sbx_installed():
        raise LookupError(f"run {Path(run_dir).name} trained with runtime.engine: sbx (JAX): its checkpoints load with "
                          f"sbx-rl, which is not installed in this Python: {JAX_FIX}")
    set_jax_env(device, sys.platform)


def _frozen(stats: bytes, env: VecEnv) -> VecNormalize:
    """The checkpoint's VecNormalize (``VecNormalize.load`` from the bytes read), frozen, rewards left raw."""
    normalize: VecNormalize = pickle.loads(stats)  # noqa: S301 - the run's own file, as VecNormalize.load unpickles it
    normalize.set_venv(env)
    normalize.training = False
    normalize.norm_reward = False
    return normalize


def missing_statistics(run_dir: Path, checkpoint: Checkpoint) -> str:
    """Why a checkpoint without VecNormalize statistics is not played, and which checkpoints have them."""
    name = BEST_CHECKPOINT["vecnormalize"] if isinstance(checkpoint, BestCheckpoint) else \
        f"step_{checkpoint.step:012d}{CHECKPOINT_PARTS['vecnormalize']}"
    kept = [c.step for c in complete_checkpoints(run_dir) if "vecnormalize" in c.files]
    instead = f"use --checkpoint with a step that has them ({', '.join(f'{s:,}' for s in kept[-3:])})" if kept else \
        "no checkpoint of the run has them: resume or restart the run to save new ones"
    return (f"run {Path(run_dir).name}: the checkpoint at step {checkpoint.step:,} has no VecNormalize statistics "
            f"({name} is missing or its manifest names none), but the run's config normalises observations "
            f"(runtime.normalize.obs: true): played on raw observations the policy would be misjudged; {instead}")


def _for_playing(cfg: RunConfig, n_envs: int, seed: int | None, render_mode: str | None) -> RunConfig:
    """The run's config for an env of ``n_envs`` (in this process, or in env processes when its steps have a time
    limit: ``env.step_timeout_s``), seeded apart from training's."""
    env_kwargs: dict[str, Any] = dict(cfg.env.kwargs)
    if render_mode is not None:
        env_kwargs["render_mode"] = render_mode
    base = cfg.runtime.seed if cfg.runtime.seed is not None else 0
    # a step time limit needs env processes: an env hung in this process could not be stopped
    vec_env = "subproc" if cfg.env.step_timeout_s is not None else "dummy"
    runtime = cfg.runtime.model_copy(update={"n_envs": n_envs, "vec_env": vec_env,
                                             "seed": seed if seed is not None else base + 20_000})
    return cfg.model_copy(update={"env": cfg.env.model_copy(update={"kwargs": env_kwargs}), "runtime": runtime})
