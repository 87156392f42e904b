"""Will this run fit? GPU and host memory before launch, with a breakdown, a verdict and a fix.

``estimate()`` computes the terms (``compute``) and, when the run does not fit comfortably,
searches for the one setting that makes it fit (``suggest``). No torch: the window calls it on
every keystroke. See ARCHITECTURE.md, "Estimate before launch".
"""

from __future__ import annotations

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces, check_spaces, probe_spaces
from core.fit.compute import compute
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
             host_memory_bytes: int | None = None, suggest: bool = True) -> FitEstimate:
    """The memory ``cfg`` needs on ``gpu`` (``None``: no GPU) and on this host."""
    issues = check_spaces(cfg, spaces.action_kind, spaces)
    if issues:
        raise ConfigError(issues)
    host_capacity = int(host_memory_bytes) if host_memory_bytes else host_memory_total()
    result = compute(cfg, spaces, gpu, host_capacity, allocator_model())
    if suggest and (result.verdict != FITS or result.host_verdict != FITS):
        result.suggestion = suggest_fix(cfg, spaces, gpu, host_capacity, result)
    return result


def estimate_config(cfg: RunConfig, gpu_name: str | None = None, host_memory_bytes: int | None = None) -> FitEstimate:
    """Convenience for callers holding only a config: probe the env, resolve the GPU, estimate."""
    spaces = probe_spaces(cfg.env)
    gpu = get_profile(gpu_name or cfg.target_gpu)
    return estimate(cfg, spaces, gpu, host_memory_bytes)
