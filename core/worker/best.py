"""The best checkpoint: the model of the best periodic evaluation so far, with the normalisation it was evaluated with.

SB3's ``EvalCallback(best_model_save_path=...)`` keeps the best model alone; the VecNormalize statistics
move on with training, so the best model played later does not reproduce the reward its evaluation
reported (rl_zoo3 #282). ``KeepBest`` runs after each evaluation (in EvalCallback's
``callback_after_eval``) and, on a new best mean, keeps ``checkpoints/best.zip`` with the training env's
statistics of that moment, ``best_vecnormalize.pkl`` (those EvalCallback synced into the eval env before
it evaluated), then ``best.json`` (``core.run.checkpoints.best_checkpoint`` reads it).

The names are fixed, so a new best replaces the old one's files: all new files are written under
temporary names first (a failed write, a full disk, leaves the last good best whole); then ``best.json``
is removed, the files are renamed over the old ones and ``best.json`` is written last. A save cut short
between those steps leaves no best rather than the new model under the old entry. A resumed run starts
from ``best.json``'s mean, so only a better evaluation replaces it; a model whose losses went NaN is never
kept (the ``Checkpointer``'s ``allowed``).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback, EvalCallback
from stable_baselines3.common.vec_env import VecNormalize

from core.run import records
from core.run.checkpoints import best_checkpoint
from core.run.layout import RunDir
from core.util.files import describe_os_error, replace_retrying, write_json_atomic
from core.util.jsonl import JsonlWriter
from core.util.text import format_number
from core.worker.checkpoints import Checkpointer, write_temp


class KeepBest(BaseCallback):
    """After each evaluation (a child of SB3's ``EvalCallback``): keeps the checkpoint of a new best mean.

    ``mean_reward`` and ``step`` are the best kept so far (read back from ``best.json`` on a resume);
    ``eval_seed`` and ``eval_episodes`` go into ``best.json``, so its evaluation can be played again.
    """

    def __init__(self, run_dir: Path, checkpointer: Checkpointer, out: JsonlWriter, eval_seed: int, eval_episodes: int):
        super().__init__()
        self.layout = RunDir(run_dir)
        self.checkpointer = checkpointer
        self.out = out
        self.eval_seed = eval_seed
        self.eval_episodes = eval_episodes
        prior = best_checkpoint(run_dir)
        known = prior is not None and math.isfinite(prior.mean_reward)
        self.mean_reward = prior.mean_reward if prior is not None and known else -math.inf
        self.step: int | None = prior.step if prior is not None and known else None

    def _on_step(self) -> bool:
        parent = self.parent
        assert isinstance(parent, EvalCallback), "KeepBest runs as an EvalCallback's callback_after_eval"
        rewards = parent.evaluations_results[-1] if parent.evaluations_results else [parent.last_mean_reward]
        mean = float(parent.last_mean_reward)
        if not math.isfinite(mean) or mean <= self.mean_reward:
            return True
        if self.checkpointer.allowed is not None and self.checkpointer.allowed():
            return True  # a diverged model (NaN losses): never the best, whatever its evaluation said
        step = int(self.num_timesteps)
        try:
            self.save(step, mean, float(np.std(rewards)))
        except OSError as exc:  # the run goes on: its last checkpoints are what a resume needs
            held = "the last best is kept" if self.layout.best_checkpoint_file("manifest").is_file() else "no best is kept now"
            self.out.write([records.event(f"the best checkpoint at step {step:,} could not be saved "
                                          f"({describe_os_error(exc)}); {held}", "warning", step=step)])
            return True
        self.mean_reward, self.step = mean, step
        self.out.write([records.event(f"new best evaluation: mean {format_number(mean)} at step {step:,} "
                                      f"(kept as checkpoints/{self.layout.best_checkpoint_file('model').name})", step=step)])
        return True

    def save(self, step: int, mean: float, std: float) -> dict[str, Any]:
        """Write the best checkpoint of the model as it is now; its ``best.json`` entry."""
        if self.checkpointer.before_save is not None:  # the evaluation's record is on disk before the best names it
            self.checkpointer.before_save()
        layout, model = self.layout, self.model
        venv = model.get_vec_normalize_env()
        parts = {"model": lambda p: model.save(p)}
        if isinstance(venv, VecNormalize):
            parts["vecnormalize"] = lambda p: venv.save(str(p))
        temps: dict[str, Path] = {}
        try:
            for part, write in parts.items():
                temps[part] = write_temp(layout, write, layout.best_checkpoint_file(part))
        except BaseException:
            for tmp in temps.values():
                tmp.unlink(missing_ok=True)
            raise
        manifest = layout.best_checkpoint_file("manifest")
        manifest.unlink(missing_ok=True)  # no entry until the new files are in place (see the module docstring)
        if "vecnormalize" not in temps:
            layout.best_checkpoint_file("vecnormalize").unlink(missing_ok=True)
        entry: dict[str, Any] = {"step": step, "mean_reward": mean, "std_reward": std, "t": time.time(),
                                 "eval_seed": self.eval_seed, "eval_episodes": self.eval_episodes, "deterministic": True}
        sizes: dict[str, int] = {}
        for part, tmp in temps.items():
            final = layout.best_checkpoint_file(part)
            replace_retrying(tmp, final)
            entry[part] = final.name
            sizes[final.name] = final.stat().st_size
        entry["sizes"] = sizes
        write_json_atomic(manifest, entry)
        return entry
