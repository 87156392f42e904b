"""The disk a run's checkpoints take: the pre-launch check refuses a launch that would fill it.

A checkpoint is the model zip (parameters and optimizer state as float32, plus a little zip
overhead), the replay buffer pickled in full (SB3 pickles the whole allocated arrays) and the
VecNormalize statistics. A run keeps ``budget.keep_checkpoints`` of them and writes the next one
before pruning the oldest, so it needs room for one more than it keeps.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from core.config.algorithms.off_policy import OffPolicyParams
from core.config.schema import RunConfig, section_as
from core.config.spaces import EnvSpaces
from core.estimate import buffers
from core.estimate.families.registry import model_shape
from core.estimate.networks import FLOAT

ZIP_OVERHEAD = 64 * 1024  # the zip's system info, pytorch_variables and the JSON of the data
MIB = 2**20


def checkpoint_bytes(cfg: RunConfig, spaces: EnvSpaces) -> int:
    """About how many bytes one checkpoint of ``cfg`` takes on disk (0 for a baseline: it saves none)."""
    if cfg.is_baseline:
        return 0
    shape = model_shape(cfg, spaces)
    size = FLOAT * shape.param_count + shape.optimizer_bytes + ZIP_OVERHEAD
    if cfg.spec is not None and not cfg.spec.on_policy:
        p = section_as(cfg, OffPolicyParams)
        size += buffers.replay_buffer_bytes(p.buffer_size, cfg.runtime.n_envs, spaces, p.optimize_memory_usage)
    if cfg.runtime.normalize.obs or cfg.runtime.normalize.reward:
        size += buffers.vecnormalize_bytes(cfg.runtime.n_envs, spaces)
    return int(size)


def disk_needed(cfg: RunConfig, spaces: EnvSpaces) -> int:
    """The room the run's checkpoints need at their peak: one more than it keeps."""
    return checkpoint_bytes(cfg, spaces) * (cfg.budget.keep_checkpoints + 1)


def free_space_problem(folder: Path, cfg: RunConfig, spaces: EnvSpaces, runs: int = 1) -> str | None:
    """Why ``runs`` runs of ``cfg`` (a group of seeds, launched at once) must not start in ``folder`` (too
    little free space), or None."""
    need = disk_needed(cfg, spaces) * runs
    if need == 0:
        return None
    probe = Path(folder)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free >= need:
        return None
    one = checkpoint_bytes(cfg, spaces)
    whose = "the run's" if runs == 1 else f"the {runs} runs'"
    per_run = "" if runs == 1 else " per run"
    return (f"not enough free disk space in {folder}: {free / MIB:,.1f} MiB free, {whose} checkpoints need about "
            f"{need / MIB:,.1f} MiB ({cfg.budget.keep_checkpoints} kept + 1 being written{per_run}, {one / MIB:,.1f} MiB "
            "each); free some space, lower budget.keep_checkpoints (or the replay buffer), or use another --runs-dir")
