"""SBX (JAX) as a run's engine (``runtime.engine: sbx``): its classes, the policy settings as flax and optax objects,
the device JAX really trains on.

SBX is SB3 with the networks and updates in JAX: its models are SB3 ``BaseAlgorithm``s, so the env, VecNormalize,
callbacks, logger, checkpoints and replay buffers of a run are the same objects as on SB3 (``core.config.engines``
says what it cannot run; validation refused those). jax loads when this module is imported, which the factory does
only for an SBX run, after the worker set ``XLA_PYTHON_CLIENT_PREALLOCATE`` and ``JAX_PLATFORMS``
(``core.estimate.xla.set_jax_env``). SBX keeps its buffers and the SB3 side on torch's CPU device whatever the
run's device; JAX places the networks.
"""

from __future__ import annotations

import sys
from typing import Any

import flax.linen as nn
import jax
import optax
from stable_baselines3.common.base_class import BaseAlgorithm

from core.config import sb3_args
from core.config.engines import FLAX_ACTIVATIONS, OPTAX_OPTIMIZERS, SBX_ALGORITHMS, SBX_POLICY_OPTIONS, SbxAlgo
from core.config.errors import ConfigError, FieldIssue
from core.config.schema import RunConfig
from core.util.imports import load_object

WINDOWS_NOTE = "JAX has no CUDA on Windows: an SBX run trains on the CPU there (WSL2 is the way to the GPU)"


def table(cfg: RunConfig) -> SbxAlgo:
    """The SBX class's table entry; validation refused an algorithm SBX lacks, so a missing one is a programming error."""
    return SBX_ALGORITHMS[cfg.algo]


def algorithm_class(cfg: RunConfig) -> type[BaseAlgorithm]:
    """SBX's class of the run's algorithm (``sbx:PPO``), or rlpanel's subclass of it where SBX's loses time
    (``core.worker.sbx_classes``: PPO compiled its update twice)."""
    from core.worker.sbx_classes import OWN

    cls: type[BaseAlgorithm] = OWN.get(cfg.algo) or load_object(table(cfg).cls)
    return cls


def model_kwargs(cfg: RunConfig, sb3_kwargs: dict[str, Any]) -> dict[str, Any]:
    """SB3's keyword arguments for the run made SBX's: those its class takes (what it lacks is at its default here:
    validation refused the others), the critic's learning rate where SBX's default is not the actor's (DDPG), and
    the policy settings as flax and optax objects."""
    entry = table(cfg)
    out = {k: v for k, v in sb3_kwargs.items() if k in entry.kwargs}
    if entry.critic_lr:  # SB3's DDPG trains both networks at learning_rate; SBX's critic at its own 1e-3
        out["qf_learning_rate"] = float(sb3_kwargs["learning_rate"])  # SBX holds it still: a schedule was refused
    out["policy_kwargs"] = policy_kwargs(cfg)
    return out


def policy_kwargs(cfg: RunConfig) -> dict[str, Any]:
    """``core.config.sb3_args.policy_kwargs`` for SBX's policy: the activation as flax's function, the optimizer as
    optax's, and only the settings SBX's policy takes and honours."""
    entry = table(cfg)
    data = sb3_args.policy_kwargs(cfg)
    options = SBX_POLICY_OPTIONS | {"net_arch", "activation_fn", "optimizer_class", "optimizer_kwargs"}
    section = set(cfg.spec.policy_params) if cfg.spec is not None else set()  # TQC's quantiles, CrossQ's batch norm
    out = {k: v for k, v in data.items() if k in entry.policy_kwargs and (k in options or k in section)}
    out["activation_fn"] = getattr(nn, FLAX_ACTIVATIONS[data["activation_fn"]])
    if "optimizer_class" in out:
        out["optimizer_class"] = getattr(optax, OPTAX_OPTIMIZERS[out["optimizer_class"]])
    return out


def jax_device(requested: str) -> str:
    """The device JAX trains on, as status.json names devices: ``cpu`` or ``cuda:N``. ``cuda:N`` asks for JAX's GPU N
    (made JAX's default); a CUDA device JAX does not have is refused naming the field and the fix."""
    gpus = _gpus()
    if requested == "cpu" or (requested == "auto" and not gpus):
        return "cpu"
    _, _, index = requested.partition(":")
    n = int(index) if index.isdigit() else 0
    if n >= len(gpus):
        why = WINDOWS_NOTE if sys.platform == "win32" else (
            f"jax {jax.__version__} sees {len(gpus)} GPU(s): install CUDA jax (pip install \"jax[cuda12]\")")
        raise ConfigError([FieldIssue("runtime.device", f"{requested} was asked for an SBX run but {why}; use cpu or auto, "
                                                        "or set runtime.engine: sb3")])
    jax.config.update("jax_default_device", gpus[n])
    return f"cuda:{n}"


def _gpus() -> list[Any]:
    """JAX's CUDA devices (none where JAX_PLATFORMS is cpu or jaxlib has no CUDA)."""
    try:
        return list(jax.devices("gpu"))
    except RuntimeError:  # "Unknown backend gpu" / no GPU platform initialised: a CPU jax
        return []


def versions_note() -> str:
    """What trains the run, for the event log: ``jax 0.4.38 (cpu), sbx 0.20.0``."""
    import sbx

    return f"jax {jax.__version__} ({jax.default_backend()}), sbx {getattr(sbx, '__version__', 'unknown')}"
