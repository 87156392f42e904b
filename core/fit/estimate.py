"""Will this run fit? GPU and host memory before launch, with a breakdown, a verdict and a fix.

``estimate()`` computes the terms (``compute``) and, when the run does not fit comfortably,
searches for the one setting that makes it fit (``suggest``). No torch: the window calls it on
every keystroke. See ARCHITECTURE.md, "Estimate before launch".
"""

from __future__ import annotations

from typing import Any

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces, check_spaces, probe_spaces
from core.config.steps import planned_steps
from core.fit.compute import compute
from core.fit.device import train_device
from core.fit.gpus import GpuProfile, allocator_model, get_profile
from core.fit.result import FITS, FitEstimate
from core.fit.suggest import suggest_fix

_host_total: int | None = None


def host_memory_total() -> int:
    global _host_total
    if _host_total is None:
        import psutil

        _host_total = int(psutil.virtual_memory().total)
    return _host_total


def estimate(cfg: RunConfig, spaces: EnvSpaces, gpu: GpuProfile | None,
             host_memory_bytes: int | None = None, suggest: bool = True,
             torch: dict[str, Any] | None = None) -> FitEstimate:
    """The memory ``cfg`` needs on ``gpu`` (``None``: no GPU) and on this host.

    ``torch`` holds the worker's torch facts (``core.fit.device.torch_facts``); with them, a GPU
    detected here that this torch cannot use is estimated as the CPU run it will be, with a warning.
    """
    issues = check_spaces(cfg, spaces.action_kind, spaces)
    if issues:
        raise ConfigError(issues)
    device, warnings = _device(cfg, gpu, torch)
    if gpu is not None and gpu.detected and device == "cpu":
        gpu = None  # the worker trains on the CPU: the GPU's memory is not what limits it
    host_capacity = int(host_memory_bytes) if host_memory_bytes else host_memory_total()
    result = compute(cfg, spaces, gpu, host_capacity, allocator_model())
    result.planned_timesteps = plan.steps if (plan := planned_steps(cfg)) else None
    if suggest and (result.verdict != FITS or result.host_verdict != FITS):
        result.suggestion = suggest_fix(cfg, spaces, gpu, host_capacity, result)
    result.train_device, result.warnings = device, warnings
    return result


def _device(cfg: RunConfig, gpu: GpuProfile | None, torch: dict[str, Any] | None) -> tuple[str, list[str]]:
    """The training device; a profile planned for another machine is trusted to have CUDA."""
    if gpu is not None and not gpu.detected:
        requested = cfg.runtime.device
        return ("cpu" if requested == "cpu" else requested if requested.startswith("cuda:") else "cuda:0"), []
    return train_device(cfg, gpu.index if gpu is not None else None, torch)


def estimate_config(cfg: RunConfig, gpu_name: str | None = None, host_memory_bytes: int | None = None,
                    torch: dict[str, Any] | None = None) -> FitEstimate:
    """Convenience for callers holding only a config: probe the env, resolve the GPU, estimate."""
    spaces = probe_spaces(cfg.env)
    gpu = get_profile(gpu_name or cfg.target_gpu)
    return estimate(cfg, spaces, gpu, host_memory_bytes, torch=torch)
