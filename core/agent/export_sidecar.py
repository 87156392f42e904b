"""The sidecar of an exported policy (``FILE.json``): what a program that loads the file needs to know.

The spaces (shape, dtype, bounds or ``n``), the input and output names, shapes and dtypes, whether
the observation normalisation is baked in, the opset (ONNX) or the torch version (TorchScript), the
run and the checkpoint. Infinite bounds are written ``"inf"``/``"-inf"`` (JSON has no infinity;
``float()`` in Python and ``np.float32()`` read them back); bounds equal in every element are one number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from core.agent.export_model import ExportedPolicy
from core.agent.load import LoadedPolicy

INPUT_NAME, OUTPUT_NAME = "observation", "action"
SIDECAR_VERSION = 1


def sidecar(loaded: LoadedPolicy, which: str, module: ExportedPolicy, fmt: str, output: Path,
            facts: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's content (``which``: the checkpoint asked for); ``facts`` adds the format's own (``opset`` or
    ``torch_version``)."""
    obs_space = loaded.env.observation_space
    action_space = loaded.model.action_space
    obs_shape = list(obs_space.shape or ())
    action_shape = list(action_space.shape or ())
    discrete = isinstance(action_space, gym.spaces.Discrete)
    normalize = loaded.normalize
    normalization: dict[str, Any] = {"baked_in": module.normalize}
    if module.normalize and normalize is not None:
        normalization.update(clip_obs=float(normalize.clip_obs), epsilon=float(normalize.epsilon))
    return {
        "sidecar_version": SIDECAR_VERSION, "format": fmt, "file": output.name, **facts,
        "run": loaded.run_dir.name, "checkpoint": which,
        "checkpoint_step": loaded.checkpoint.step, "algo": loaded.cfg.algo, "env": loaded.cfg.env.label,
        "policy": type(loaded.model.policy).__name__, "deterministic": True,
        "input": {"name": INPUT_NAME, "dtype": "float32", "shape": ["batch", *obs_shape],
                  "note": "raw observations, as the env gives them (before any normalisation)"},
        "output": {"name": OUTPUT_NAME, "dtype": "int64" if discrete else "float32", "shape": ["batch", *action_shape],
                   "note": "an action index" if discrete else "actions in the env's bounds (unscaled, clipped)"},
        "normalization": normalization,
        "observation_space": describe_space(obs_space), "action_space": describe_space(action_space),
    }


def describe_space(space: gym.Space[Any]) -> dict[str, Any]:
    """A Box or Discrete space as JSON data (other spaces: their type and shape)."""
    if isinstance(space, gym.spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    out: dict[str, Any] = {"type": type(space).__name__, "shape": list(space.shape or ()), "dtype": str(space.dtype)}
    if isinstance(space, gym.spaces.Box):
        out.update(low=_bounds(space.low), high=_bounds(space.high))
    return out


def _bounds(values: np.ndarray) -> Any:
    flat = np.asarray(values, dtype=np.float64).ravel()
    if flat.size and np.all(flat == flat[0]):
        return _number(float(flat[0]))
    return np.vectorize(_number, otypes=[object])(np.asarray(values, dtype=np.float64)).tolist()


def _number(value: float) -> float | int | str:
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    return int(value) if value.is_integer() else value
