"""Will this run fit? GPU and host memory before launch, with a breakdown, a verdict and a fix.

``estimate()`` computes the terms (``compute``) and, when the run does not fit comfortably,
searches for the one setting that makes it fit (``suggest``). No torch: the window calls it on
every keystroke. See docs/estimate.md.
"""

from __future__ import annotations

import sys
from typing import Any

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces, check_spaces, probe_spaces
from core.config.steps import planned_steps
from core.estimate.compute import compute
from core.estimate.device import device_reason, policy_warnings, train_device, worker_threads
from core.estimate.gpus import GpuProfile, allocator_model, detected_profiles, get_profile, history_text
from core.estimate.measured import measure_network, needs_measure
from core.estimate.result import FITS, MIB, NO_FIT, FitEstimate
from core.estimate.suggest import suggest_fix

_host_total: int | None = None


def host_memory_total() -> int:
    global _host_total
    if _host_total is None:
        import psutil

        _host_total = int(psutil.virtual_memory().total)
    return _host_total


def estimate(cfg: RunConfig, spaces: EnvSpaces, gpu: GpuProfile | None,
             host_memory_bytes: int | None = None, suggest: bool = True,
             torch: dict[str, Any] | None = None, here: list[GpuProfile] | None = None,
             platform: str = sys.platform) -> FitEstimate:
    """The memory ``cfg`` needs on ``gpu`` (``None``: no GPU) and on this host.

    ``train_device`` is always where a worker launched on this machine trains (``core.estimate.device``:
    the one rule), from ``torch`` (the worker's facts for its engine: torch's, or jax's for an SBX run) and this
    machine's GPUs (``here``, default: those NVML detects). A ``gpu`` that is not this machine's is a planning target: the
    terms are its, and ``this_machine`` with a warning says what happens here instead. A run that does not fit a
    card of this machine on Windows (``platform``) is marked ``sysmem_fallback``: it will crawl, not fail.
    """
    issues = check_spaces(cfg, spaces.action_kind, spaces)
    if issues:
        raise ConfigError(issues)
    host_capacity = int(host_memory_bytes) if host_memory_bytes else host_memory_total()
    local = _local_gpu(cfg, gpu, detected_profiles() if here is None else here)
    device, warnings = train_device(cfg, local.index if local is not None else None, torch, platform)
    if gpu is None or gpu.detected:  # planned for this machine
        result = _compute(cfg, spaces, local if device != "cpu" else None, host_capacity, suggest)
        result.planned_device = device
    else:
        result = _compute(cfg, spaces, gpu, host_capacity, suggest)
        result.planned_device = _planned_device(cfg)
        mine = _compute(cfg, spaces, local if device != "cpu" else None, host_capacity, False)
        mine.train_device = mine.planned_device = device
        result.this_machine = mine
        warnings.insert(0, f"planned for {gpu.name} (the target), which is not this machine: here it trains on "
                           f"{device_reason(cfg, device, local, torch, platform)}; "
                           + (f"{mine.gpu_bytes / MIB:,.0f} MiB of {mine.capacity_bytes / MIB:,.0f} MiB on "
                              f"{mine.gpu_name}, {mine.verdict}" if mine.on_gpu else
                              f"host RAM {mine.host_bytes / MIB:,.0f} MiB, {mine.host_verdict}"))
    on_this_card = result.this_machine or result  # a target card elsewhere runs on an OS this machine does not know
    on_this_card.sysmem_fallback = platform.startswith("win") and on_this_card.on_gpu and on_this_card.verdict == NO_FIT
    result.train_device = device
    result.train_device_reason = device_reason(cfg, device, local, torch, platform)
    result.advice = policy_warnings(cfg, spaces, device, result.parameter_count)
    result.warnings = warnings + result.advice
    result.planned_timesteps = plan.steps if (plan := planned_steps(cfg)) else None
    result.torch_threads = worker_threads(cfg, device)  # the worker's threads here, as train_device is its device
    if result.this_machine is not None:
        result.this_machine.torch_threads = result.torch_threads
    return result


def _compute(cfg: RunConfig, spaces: EnvSpaces, gpu: GpuProfile | None, host_capacity: int,
             suggest: bool) -> FitEstimate:
    result = compute(cfg, spaces, gpu, host_capacity, allocator_model())
    result.gpu_source = gpu.source if gpu is not None and result.on_gpu else ""
    result.gpu_history = history_text(gpu) if gpu is not None and result.on_gpu else ""
    if suggest and (result.verdict != FITS or result.host_verdict != FITS):
        result.suggestion = suggest_fix(cfg, spaces, gpu, host_capacity, result)
    return result


def _local_gpu(cfg: RunConfig, gpu: GpuProfile | None, here: list[GpuProfile]) -> GpuProfile | None:
    """This machine's card a worker would use: the detected target, else the one ``cuda:N`` names, else the first."""
    if gpu is not None and gpu.detected:
        return gpu
    requested = cfg.runtime.device
    index = int(requested.split(":", 1)[1]) if requested.startswith("cuda:") else None
    return next((p for p in here if index is None or p.index == index), None)


def _planned_device(cfg: RunConfig) -> str:
    """The device a plan for another machine's card assumes (trusted to have CUDA)."""
    requested = cfg.runtime.device
    return "cpu" if requested == "cpu" else requested if requested.startswith("cuda:") else "cuda:0"


def estimate_config(cfg: RunConfig, gpu_name: str | None = None, host_memory_bytes: int | None = None,
                    torch: dict[str, Any] | None = None) -> FitEstimate:
    """Convenience for callers holding only a config: probe the env, measure an own network, resolve the GPU, estimate."""
    spaces = probe_spaces(cfg.env)
    if needs_measure(cfg):  # an own network, or an SBX model: built in a child process and counted
        measure_network(cfg)
    gpu = get_profile(gpu_name or cfg.target_gpu)
    return estimate(cfg, spaces, gpu, host_memory_bytes, torch=torch)
