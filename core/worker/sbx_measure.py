"""Measure an SBX (JAX) model for the fit estimate: built for real on the device JAX trains on, its arrays counted.

The torch formulas of ``core.estimate.families`` count torch's tensors, allocator and CUDA context; an SBX run holds
flax parameters and optax state in XLA's allocator instead. ``python -m core.worker.sbx_measure --config JSON``
builds the very model the worker would (``factory.build_model``, one env, in a child process: the estimate's own
process never imports jax) and prints JSON: the bytes of every array of its train states (parameters, target copies,
optimizer state, batch-norm statistics) and, on a GPU, what XLA's allocator holds after the build
(``memory_stats()``: ``bytes_in_use``, ``peak_bytes_in_use``). JAX's CPU device keeps no such statistics
(``memory_stats()`` is None there): the counted arrays are the host figure, rather than the process RSS delta,
which jax's own imports and the compile caches swamp. ``core.estimate.measured`` runs it and keeps the result.

Checked by reading only on this project's machines (no GPU): the ``memory_stats()`` keys on a CUDA device.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from core.config.schema import RunConfig
from core.estimate.xla import set_jax_env

STATE_PARTS = ("params", "target_params", "opt_state", "batch_stats", "target_batch_stats")


def _bytes(tree: Any) -> tuple[int, int, int]:
    """(bytes, elements, arrays) of the arrays in a pytree."""
    import jax  # here: after set_jax_env (jax reads its settings once, at import)

    leaves = [leaf for leaf in jax.tree_util.tree_leaves(tree) if hasattr(leaf, "nbytes")]
    return sum(int(leaf.nbytes) for leaf in leaves), sum(int(leaf.size) for leaf in leaves), len(leaves)


def train_states(model: Any) -> list[Any]:
    """The flax train states an SBX model holds (actor, critics or Q-network, the entropy coefficient's)."""
    found: list[Any] = []
    for owner in (model.policy, model):
        for value in vars(owner).values():
            if hasattr(value, "params") and hasattr(value, "opt_state") and all(value is not f for f in found):
                found.append(value)
    return found


def measure_model(model: Any) -> dict[str, Any]:
    """Count ``model``'s arrays by part, and XLA's allocator statistics on its device when it keeps them."""
    import jax

    trainable = target = optimizer = state = 0
    params = trained = tensors = 0
    for ts in train_states(model):
        size, count, arrays = _bytes(ts.params)
        trainable, trained, params, tensors = trainable + size, trained + count, params + count, tensors + arrays
        size, count, _ = _bytes(getattr(ts, "target_params", None))
        target, params = target + size, params + count
        optimizer += _bytes(ts.opt_state)[0]
        state += _bytes(getattr(ts, "batch_stats", None))[0] + _bytes(getattr(ts, "target_batch_stats", None))[0]
    device = jax.devices()[0]
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    return {"engine": "sbx", "backend": jax.default_backend(), "device": device.platform,
            "trainable_bytes": trainable, "target_bytes": target, "optimizer_bytes": optimizer, "state_bytes": state,
            "params": params, "trainable": trained, "tensors": tensors,
            "in_use_bytes": int(stats["bytes_in_use"]) if stats and "bytes_in_use" in stats else None,
            "peak_bytes": int(stats["peak_bytes_in_use"]) if stats and "peak_bytes_in_use" in stats else None}


def remember_model(cfg: RunConfig, model: Any, device: str) -> None:
    """The worker's own model, measured and kept for the estimate it records for its card (``fit_record``)."""
    from core.estimate.measured import remember, sbx_from_json

    remember(cfg, sbx_from_json({**measure_model(model), "train_device": device}))


def measure_config(cfg: RunConfig) -> dict[str, Any]:
    """Build ``cfg``'s env (one, in this process) and SBX model on the device JAX trains on, and measure it."""
    from core.worker.factory import build_model, build_vec_env, train_device

    env, _ = build_vec_env(cfg, n_envs=1, force_dummy=True)
    try:
        device = train_device(cfg)  # JAX's device for the run (made its default): cpu or cuda:N
        model = build_model(cfg, env, cfg.runtime.device)
        return {**measure_model(model), "train_device": device}
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.worker.sbx_measure", description="Measure an SBX model.")
    parser.add_argument("--config", required=True, help="the run config as JSON")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    try:
        cfg = RunConfig.model_validate(json.loads(args.config))
        set_jax_env(cfg.runtime.device, sys.platform)  # as the worker does: the same device, the same allocator
        out = measure_config(cfg)
    except Exception as exc:  # noqa: BLE001 (the env may be user code: report anything it raises, in one line)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        out = {"error_build": f"{type(exc).__name__}: {first}".rstrip(": ")}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
