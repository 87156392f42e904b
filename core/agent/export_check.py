"""``--check`` of an export: the written file against SB3's own ``predict`` on the same observations.

1,000 observations are drawn from the env's observation space with a fixed seed (gymnasium's
``Box.sample``: uniform within finite bounds, normal where a bound is infinite). The file gets them
raw; ``predict(deterministic=True)`` gets them as the agent saw them in its env, normalised by the
checkpoint's frozen VecNormalize. The answer: the largest absolute difference, and the mismatches
(Discrete: the actions that differ; Box: the observations whose action differs by more than 1e-5).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from core.agent.export_sidecar import INPUT_NAME
from core.agent.load import LoadedPolicy

CHECK_OBSERVATIONS = 1000
TOLERANCE = 1e-5


def space_sample(space: gym.Space[Any], count: int, seed: int) -> np.ndarray:
    """``count`` observations of the Box ``space`` from its own sampler, seeded, as a float32 batch."""
    if not isinstance(space, gym.spaces.Box):
        raise ValueError(f"observations of a {type(space).__name__} space cannot be sampled as one array")
    box = gym.spaces.Box(space.low, space.high, space.shape, space.dtype, seed=seed)  # a copy: the env's own space keeps its RNG
    return np.stack([box.sample() for _ in range(count)]).astype(np.float32)


def run_file(fmt: str, path: Path, observations: np.ndarray) -> np.ndarray:
    """The actions the exported file gives for ``observations`` (onnxruntime on the CPU, or ``torch.jit.load``)."""
    if fmt == "onnx":
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return np.asarray(session.run(None, {INPUT_NAME: observations})[0])
    with warnings.catch_warnings():  # torch 2.10+ calls TorchScript deprecated; the file is what was asked for
        warnings.simplefilter("ignore", DeprecationWarning)
        module = torch.jit.load(str(path), map_location="cpu")
    with torch.no_grad():
        return np.asarray(module(torch.as_tensor(observations)).numpy())


def check_export(loaded: LoadedPolicy, fmt: str, path: Path, seed: int) -> dict[str, Any]:
    """``{observations, max_abs_diff, mismatches, tolerance}`` of the file at ``path`` against SB3's ``predict``."""
    raw = space_sample(loaded.env.observation_space, CHECK_OBSERVATIONS, seed)
    exported = run_file(fmt, path, raw)
    seen = loaded.normalize.normalize_obs(raw) if loaded.normalize is not None else raw
    expected, _ = loaded.model.predict(seen, deterministic=True)
    expected = np.asarray(expected)
    if exported.shape != expected.shape:
        raise ValueError(f"the exported file gives actions of shape {exported.shape}, SB3's predict {expected.shape}")
    diff = np.abs(exported.astype(np.float64) - expected.astype(np.float64))
    if isinstance(loaded.model.action_space, gym.spaces.Discrete):
        mismatches = int(np.count_nonzero(diff))
    else:
        mismatches = int(np.count_nonzero((diff > TOLERANCE).reshape(len(diff), -1).any(axis=1)))
    return {"observations": CHECK_OBSERVATIONS, "max_abs_diff": float(diff.max(initial=0.0)), "mismatches": mismatches,
            "tolerance": TOLERANCE}
