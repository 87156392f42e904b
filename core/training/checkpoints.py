"""Atomic checkpoints: model .zip, replay buffer and VecNormalize stats, named by ``latest.json``.

Each file is written under a temporary name and renamed; ``latest.json`` is replaced last, so
it always names a complete checkpoint even if the worker is killed mid-save.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.vec_env import VecNormalize

from core.run import records
from core.run.layout import RunDir
from core.run.store import latest_checkpoint
from core.util.files import replace_retrying, write_json_atomic
from core.util.jsonl import JsonlWriter


class Checkpointer:
    def __init__(self, run_dir: Path, keep: int, events: JsonlWriter | None = None):
        self.layout = RunDir(run_dir)
        self.folder = self.layout.checkpoints
        self.folder.mkdir(parents=True, exist_ok=True)
        self.keep = keep
        self.events = events
        self.last_step: int | None = None

    def save(self, model: BaseAlgorithm) -> dict[str, Any]:
        step = int(model.num_timesteps)
        if step == self.last_step:
            return latest_checkpoint(self.layout.path) or {}
        started = time.monotonic()
        stem = f"step_{step:012d}"
        entry: dict[str, Any] = {"step": step, "t": time.time(), "model": f"{stem}.zip"}
        self._atomic(lambda p: model.save(p), f"{stem}.zip")
        if isinstance(model, OffPolicyAlgorithm) and model.replay_buffer is not None:
            self._atomic(lambda p: model.save_replay_buffer(p), f"{stem}_replay.pkl")
            entry["replay_buffer"] = f"{stem}_replay.pkl"
        venv = model.get_vec_normalize_env()
        if isinstance(venv, VecNormalize):
            self._atomic(lambda p: venv.save(str(p)), f"{stem}_vecnormalize.pkl")
            entry["vecnormalize"] = f"{stem}_vecnormalize.pkl"
        write_json_atomic(self.layout.latest_checkpoint, entry)
        self.last_step = step
        self._prune()
        if self.events is not None:
            size = sum((self.folder / entry[k]).stat().st_size for k in ("model", "replay_buffer", "vecnormalize") if k in entry)
            took = time.monotonic() - started
            message = f"checkpoint saved at step {step:,} ({size / 2**20:.1f} MiB, {took:.1f} s)"
            self.events.write([records.event(message, step=step)])
        return entry

    def _atomic(self, save: Callable[[Path], object], name: str) -> None:
        # SB3 appends .zip/.pkl when the suffix is missing, so keep the real suffix on the temp name
        tmp = self.folder / f".tmp-{name}"
        save(tmp)
        replace_retrying(tmp, self.folder / name)

    def _prune(self) -> None:
        steps = sorted({p.name[5:17] for p in self.folder.glob("step_*.zip")})
        for old in steps[: -self.keep]:
            for path in self.folder.glob(f"step_{old}*"):
                path.unlink(missing_ok=True)
