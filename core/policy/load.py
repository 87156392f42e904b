"""Load a run's checkpoint for use: the model, and a fresh env with the normalisation saved with that checkpoint.

The statistics come from the checkpoint's own ``_vecnormalize.pkl`` (never the run's latest ones:
the best model must be evaluated with the statistics it was evaluated with, rl_zoo3 #282), frozen
(``training=False``) and with rewards left unnormalised, so a reward is the env's own. The env is
the run's env with its wrappers and frame stack, in this process (``DummyVecEnv``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from core.config.schema import RunConfig
from core.run.checkpoints import Checkpoint, select_checkpoint
from core.run.store import load_run_config
from core.training.factory import build_vec_env, load_model


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
    Raises ``LookupError`` for a checkpoint the run does not keep.
    """
    run_dir = Path(run_dir)
    checkpoint = select_checkpoint(run_dir, which)
    cfg = _for_playing(load_run_config(run_dir), n_envs, seed, render_mode)
    env, _ = build_vec_env(cfg, force_dummy=True)
    stats = checkpoint.path(run_dir, "vecnormalize")
    if stats is not None:
        env = VecNormalize.load(str(stats), env)
        env.training = False
        env.norm_reward = False
    try:
        model = load_model(cfg, checkpoint.path(run_dir, "model") or Path(), env, device=device)
    except BaseException:
        env.close()
        raise
    # SB3's load seeds the env again with the seed the model trained with (set_random_seed): this one's first
    # reset is the one asked for, so a seed plays the same episodes as training's evaluation with that seed
    env.seed(cfg.runtime.seed)
    return LoadedPolicy(run_dir, cfg, checkpoint, model, env)


def _for_playing(cfg: RunConfig, n_envs: int, seed: int | None, render_mode: str | None) -> RunConfig:
    """The run's config for an env of ``n_envs`` in this process, seeded apart from training's."""
    env_kwargs: dict[str, Any] = dict(cfg.env.kwargs)
    if render_mode is not None:
        env_kwargs["render_mode"] = render_mode
    base = cfg.runtime.seed if cfg.runtime.seed is not None else 0
    runtime = cfg.runtime.model_copy(update={"n_envs": n_envs, "vec_env": "dummy",
                                             "seed": seed if seed is not None else base + 20_000})
    return cfg.model_copy(update={"env": cfg.env.model_copy(update={"kwargs": env_kwargs}), "runtime": runtime})
