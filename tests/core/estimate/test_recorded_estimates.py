"""The fit estimate of every algorithm on a grid of spaces and settings, byte for byte as recorded.

``recorded_estimates.json`` holds ``estimate(...).to_json()`` of each case, recorded before the sizes
moved into one module per network family (issue 23); a refactor of ``core.estimate`` must reproduce it
exactly. A change that means to move a number records the file again and says why in its commit:

    python -m tests.core.estimate.test_recorded_estimates

The GPU is a profile built here (not a detected one, so no calibration applies), the host a fixed
size, subprocess envs start with spawn and CUDA_MODULE_LOADING is unset, so the numbers are the same
on every machine and OS.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

import gymnasium as gym
import numpy as np
import pytest

import core.util.threads
from core.config.algorithms.registry import ALGORITHMS
from core.config.dotted import set_path
from core.config.errors import ConfigError
from core.config.spaces import EnvSpaces, describe
from core.config.validate import validate_config
from core.estimate.estimate import estimate
from core.estimate.gpus import GpuProfile

RECORD = Path(__file__).with_name("recorded_estimates.json")
MIB = 1 << 20
# small enough that the big batches, nets and replay buffers do not fit, so the fix is searched and recorded too
HOST = 8 << 30
CORES = 8
GPU = GpuProfile("Fixture GPU 2 GiB", 2048 * MIB, "8.9", True, "ada", 400 * MIB, 20 * MIB)


def _box(*shape: int, dtype: Any = np.float32) -> gym.spaces.Box:
    return gym.spaces.Box(-1, 1, shape, dtype)


def _image(channels_first: bool = False) -> gym.spaces.Box:
    return gym.spaces.Box(0, 255, (3, 40, 44) if channels_first else (40, 44, 3), np.uint8)


_DICT = gym.spaces.Dict({"pos": _box(3), "mode": gym.spaces.Discrete(5), "grid": gym.spaces.MultiBinary(6)})
# name -> (observation space, action space); every env has action_masks() so MaskablePPO takes them all
SPACES: dict[str, tuple[gym.Space[Any], gym.Space[Any]]] = {
    "box": (_box(3), _box(1)),
    "box-float64": (_box(17, dtype=np.float64), _box(6, dtype=np.float64)),
    "discrete": (_box(4), gym.spaces.Discrete(2)),
    "multidiscrete": (_box(8), gym.spaces.MultiDiscrete([3, 4, 5])),
    "multibinary": (_box(6), gym.spaces.MultiBinary(4)),
    "discrete-obs": (gym.spaces.Discrete(16), gym.spaces.Discrete(4)),
    "image": (_image(), gym.spaces.Discrete(3)),
    "image-box": (_image(channels_first=True), _box(2)),
    "dict": (_DICT, _box(2)),
    "dict-discrete": (_DICT, gym.spaces.Discrete(3)),
}
# The spaces every variant runs on (each algorithm takes the ones its action space allows).
VARIANT_SPACES = ("box", "discrete", "image", "image-box")

# name -> (path, value) overrides; "@" is the algorithm's own section. A variant is recorded for an
# algorithm whose section has every "@" field, whose config and spaces it validates with, and whose
# estimate it changes (one equal to the default's is left out; should it start or stop differing, the
# case list changes and the test says so).
VARIANTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "default": (),
    "8-envs": (("runtime.n_envs", 8),),
    "cpu": (("runtime.device", "cpu"),),
    "elu-wide": (("policy.activation", "elu"), ("policy.net_arch", [512, 256, 128])),
    "split-net-vf": (("policy.net_arch", {"pi": [32], "vf": [128, 128]}),),
    "split-net-qf": (("policy.net_arch", {"pi": [32], "qf": [96, 96]}),),
    "mlp-on-images": (("policy.kind", "MlpPolicy"),),
    "own-extractors": (("policy.share_features_extractor", False),),
    "shared-extractor": (("policy.share_features_extractor", True),),
    "rmsprop": (("policy.optimizer", "rmsprop"),),
    "normalize-subproc": (("runtime.normalize.obs", True), ("runtime.normalize.reward", True),
                          ("runtime.vec_env", "subproc"), ("runtime.n_envs", 4)),
    "subproc-sb3": (("runtime.vec_env", "subproc-sb3"), ("runtime.n_envs", 2)),
    "long-rollout": (("@.n_steps", 4096), ("runtime.n_envs", 16)),
    "big-batch": (("@.batch_size", 4096),),
    "no-rms-prop": (("@.use_rms_prop", False),),
    "sde": (("@.use_sde", True),),
    "sde-no-full-std": (("@.use_sde", True), ("policy.full_std", False)),
    "three-critics": (("policy.n_critics", 3),),
    "small-buffer": (("@.buffer_size", 5_000), ("budget.total_timesteps", 100_000)),
    "big-buffer": (("@.buffer_size", 20_000_000), ("budget.total_timesteps", 5_000_000), ("runtime.n_envs", 4)),
    "optimize-memory": (("@.optimize_memory_usage", True), ("@.buffer_size", 2_000_000)),
    "fixed-ent-coef": (("@.ent_coef", 0.1),),
    "seven-quantiles": (("@.n_quantiles", 7),),
    "no-batch-norm": (("@.batch_norm", False),),
    "lstm-no-critic": (("@.enable_critic_lstm", False), ("@.n_lstm_layers", 2), ("@.lstm_hidden_size", 64)),
    "lstm-shared": (("@.shared_lstm", True), ("@.enable_critic_lstm", False)),
    "linear": (("@.linear_policy", True),),
    "no-bias": (("@.with_bias", False), ("@.n_delta", 32)),
    "huge-net": (("policy.net_arch", [8192, 8192, 8192]),),  # no fit on the GPU: a smaller net or batch is searched
    "many-perturbations": (("@.n_delta", 512), ("policy.net_arch", [2048, 2048])),
}


def spaces_named(name: str) -> EnvSpaces:
    obs, act = SPACES[name]
    return replace(describe(obs, act), action_masks=True)


def case_config(algo: str, variant: str) -> Any | None:
    """The validated config of a case, or None where the variant does not apply to the algorithm."""
    spec = ALGORITHMS[algo]
    raw: dict[str, Any] = {"algo": algo, "env": {"id": "Pendulum-v1"}, "runtime": {"start_method": "spawn"}}
    for path, value in VARIANTS[variant]:
        if path.startswith("@."):
            if path[2:] not in spec.params.model_fields:
                return None
            path = spec.section + path[1:]
        raw = set_path(raw, path, value)
    try:
        return validate_config(raw).config
    except ConfigError:
        return None


def run_case(algo: str, space: str, variant: str) -> dict[str, Any] | None:
    cfg = case_config(algo, variant)
    if cfg is None:
        return None
    try:
        gpu = None if cfg.runtime.device == "cpu" else GPU
        with mock.patch.object(core.util.threads, "usable_cores", lambda: CORES):  # its torch threads: as on 8 cores
            result = estimate(cfg, spaces_named(space), gpu, HOST, here=[])  # this machine has no GPU, wherever it runs
    except ConfigError:  # the algorithm does not take this space (or this setting on it)
        return None
    return result.to_json()


def all_cases() -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = {}
    for algo in ALGORITHMS:
        for space in SPACES:
            default = run_case(algo, space, "default")
            if default is None:
                continue
            cases[f"{algo}/{space}/default"] = default
            for variant in VARIANTS if space in VARIANT_SPACES else ("cpu",):
                found = run_case(algo, space, variant)
                if found is not None and found != default:
                    cases[f"{algo}/{space}/{variant}"] = found
    return cases


def _differences(recorded: Any, now: Any, where: str = "") -> list[str]:
    if isinstance(recorded, dict) and isinstance(now, dict):
        return [d for k in sorted(set(recorded) | set(now))
                for d in _differences(recorded.get(k, "<missing>"), now.get(k, "<missing>"), f"{where}.{k}")]
    if isinstance(recorded, list) and isinstance(now, list) and len(recorded) == len(now):
        return [d for i, (r, n) in enumerate(zip(recorded, now, strict=True)) for d in _differences(r, n, f"{where}[{i}]")]
    return [] if recorded == now else [f"{where}: recorded {recorded!r}, now {now!r}"]


def test_every_recorded_estimate_is_reproduced_exactly(monkeypatch):
    monkeypatch.delenv("CUDA_MODULE_LOADING", raising=False)
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))
    now = all_cases()
    assert sorted(now) == sorted(recorded), "the cases changed: record the file again if that is meant"
    wrong = {case: _differences(recorded[case], now[case]) for case in recorded if recorded[case] != now[case]}
    assert not wrong, f"{len(wrong)} estimates changed, e.g. " + "; ".join(
        f"{case}: {', '.join(diffs[:3])}" for case, diffs in list(wrong.items())[:5])


@pytest.mark.parametrize("algo", list(ALGORITHMS))
def test_every_algorithm_is_recorded_on_several_spaces_and_settings(algo):
    """A new algorithm (or a variant its section stopped taking) shows up here before it goes unrecorded."""
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))
    mine = [case.split("/")[1:] for case in recorded if case.split("/")[0] == algo]
    assert len({space for space, _ in mine}) >= 2
    assert len({variant for _, variant in mine}) >= 8


if __name__ == "__main__":  # record the file again
    os.environ.pop("CUDA_MODULE_LOADING", None)
    cases = all_cases()
    RECORD.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in cases.items())
                      + "\n}\n", encoding="utf-8")
    print(f"recorded {len(cases)} estimates in {RECORD}")
