"""The user's own network, measured for the estimate (issue 30): ``core.worker.measure`` in a child process.

A config with ``policy.features_extractor`` or ``policy.class`` names a network the formulas of
``core.estimate.families`` cannot count. ``measure_network(cfg)`` runs ``python -m core.worker.measure``
(torch, SB3 and the user's code stay out of this process, as with the env probe) once the user
trusted the code, from the run's import folder, and keeps the result by the network's settings;
``compute`` then takes the parameters and the activations from it (``lookup``), scaled to the
batch a config or a suggested fix trains with. The fit result says "measured from your network".

An SBX (JAX) run is measured the same way, whatever its network: its flax parameters and optax state live in XLA's
allocator, which no torch formula describes. ``core.worker.sbx_measure`` builds the model on the device JAX trains
on and counts its arrays (and, on a GPU, what XLA holds); the result says "measured from the SBX model".
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

from core.config.errors import ConfigError, FieldIssue
from core.config.schema import RunConfig
from core.config.spaces import child_json
from core.config.trust import require_trusted, require_trusted_policy

MEASURE_MODULE = "core.worker.measure"
SBX_MEASURE_MODULE = "core.worker.sbx_measure"
MEASURE_TIMEOUT_S = 180.0
SOURCE = "measured from your network"
SBX_SOURCE = "measured from the SBX model"


@dataclass(frozen=True)
class MeasuredNetwork:
    """What ``core.worker.measure`` found (``NetworkMeasure`` as plain data)."""

    params: int
    trainable: int
    tensors: int
    activation_bytes: int  # one training pass of ``batch`` samples
    batch: int
    error: str = ""        # why the pass could not run: the activations are then the formula's
    # an SBX model (``engine`` "sbx"): its arrays counted by part; XLA's bytes in use after the build on a GPU (None:
    # measured on the CPU, whose device keeps no statistics); the activations are the formula's (no pass is run)
    engine: str = "sb3"
    optimizer_bytes: int = 0
    target_bytes: int = 0
    state_bytes: int = 0
    in_use_bytes: int | None = None
    device: str = ""

    @property
    def source(self) -> str:
        """What the fit result says of these counts."""
        return SBX_SOURCE if self.engine == "sbx" else SOURCE

    def activations_for(self, batch: int) -> int:
        """The activation term for a pass of ``batch`` samples (it grows with the batch)."""
        return self.activation_bytes * batch // max(self.batch, 1)


_cache: dict[str, MeasuredNetwork] = {}
_lock = threading.Lock()


def needs_measure(cfg: RunConfig) -> bool:
    """Whether ``cfg``'s network is measured rather than counted: the user's own, or any of an SBX run."""
    return not cfg.is_baseline and (bool(cfg.policy.code) or cfg.runtime.engine == "sbx")


def network_key(cfg: RunConfig) -> str:
    """What the measurement depends on: the env, the algorithm, the policy (not the batch); for SBX the device asked
    for too (what XLA holds differs between the CPU and a GPU)."""
    data = cfg.model_dump(mode="json", include={"env", "algo", "policy"})
    data["env"].pop("path", None) if isinstance(data.get("env"), dict) else None
    if cfg.runtime.engine == "sbx":  # and the settings of the section its policy takes (TQC's quantiles), not the batch
        section = cfg.spec.policy_params if cfg.spec is not None else ()
        data["sbx"] = {"device": cfg.runtime.device, **{k: repr(getattr(cfg.params, k)) for k in section}}
    return json.dumps(data, sort_keys=True, default=repr)


def lookup(cfg: RunConfig) -> MeasuredNetwork | None:
    """The measurement of ``cfg``'s network when ``measure_network`` made it, else None."""
    with _lock:
        return _cache.get(network_key(cfg))


def measure_network(cfg: RunConfig, use_cache: bool = True) -> MeasuredNetwork:
    """Measure ``cfg``'s own network in a child process (``ConfigError`` naming the field when it cannot be built;
    refused before any import while its code is not trusted)."""
    require_trusted(cfg.env)
    require_trusted_policy(cfg.policy)
    key = network_key(cfg)
    if use_cache and (found := lookup(cfg)) is not None:
        return found
    if cfg.runtime.engine == "sbx":
        found = _measure_sbx(cfg)
        with _lock:
            _cache[key] = found
        return found
    where = "policy.class" if cfg.policy.policy_class and not cfg.policy.features_extractor else "policy.features_extractor"
    cmd = [sys.executable, "-m", MEASURE_MODULE, "--config", cfg.model_dump_json()]
    try:
        data, failed = child_json(cmd, cfg.env.path, MEASURE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ConfigError([FieldIssue(where, f"measuring your network took longer than {MEASURE_TIMEOUT_S:.0f} s: "
                                             "make its constructor fast (no downloads in __init__)")]) from None
    if data is None:
        data = {"error_build": f"the measuring process failed ({failed})"}
    if "error_build" in data:
        raise ConfigError([FieldIssue(where, f"your network cannot be built for {cfg.env.label}: {data['error_build']}; "
                                             "check the class and policy.features_extractor_kwargs")])
    found = MeasuredNetwork(int(data["params"]), int(data["trainable"]), int(data["tensors"]),
                            int(data["saved_bytes"]) + 2 * int(data["widest_bytes"]), int(data["batch"]),
                            str(data.get("error", "")))
    with _lock:
        _cache[key] = found
    return found


def _measure_sbx(cfg: RunConfig) -> MeasuredNetwork:
    """``core.worker.sbx_measure`` in a child process: the SBX model built and its arrays counted."""
    cmd = [sys.executable, "-m", SBX_MEASURE_MODULE, "--config", cfg.model_dump_json()]
    try:
        data, failed = child_json(cmd, cfg.env.path, MEASURE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ConfigError([FieldIssue("runtime.engine", f"building the SBX model to measure it took longer than "
                                                        f"{MEASURE_TIMEOUT_S:.0f} s; set runtime.engine: sb3 to estimate "
                                                        "by the formulas")]) from None
    if data is None:
        data = {"error_build": f"the measuring process failed ({failed})"}
    if "error_build" in data:
        raise ConfigError([FieldIssue("runtime.engine", f"the SBX model cannot be built for {cfg.env.label}: "
                                                        f"{data['error_build']}; set runtime.engine: sb3, or fix the "
                                                        "setting it names")])
    return sbx_from_json(data)


def sbx_from_json(data: dict[str, Any]) -> MeasuredNetwork:
    """``core.worker.sbx_measure``'s JSON as a measurement."""
    return MeasuredNetwork(int(data["params"]), int(data["trainable"]), int(data["tensors"]), 0, 1, "", "sbx",
                           int(data["optimizer_bytes"]), int(data["target_bytes"]), int(data["state_bytes"]),
                           None if data.get("in_use_bytes") is None else int(data["in_use_bytes"]),
                           str(data.get("train_device", "")))


def remember(cfg: RunConfig, found: MeasuredNetwork) -> None:
    """Keep a measurement made elsewhere (the worker measures its own SBX model before it records its estimate)."""
    with _lock:
        _cache[network_key(cfg)] = found
