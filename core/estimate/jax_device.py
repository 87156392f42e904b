"""Which device an SBX (JAX) run launched here trains on: JAX's devices, not torch's, asked without importing jax.

An SBX run's networks are JAX's: torch's CUDA says nothing of them. ``jax_facts()`` asks the worker's Python once
(``python -m core.worker.jax_probe``), only where sbx is installed, and keeps the answer per interpreter and jax
version, in memory and in the user folder, as ``core.estimate.device`` keeps torch's. ``train_device()`` is the rule: on
Windows JAX has no CUDA (the worker sets ``JAX_PLATFORMS=cpu`` there), and a Linux jax without CUDA trains on the CPU
though a GPU is present, with the fix. ``core.estimate.device`` hands SBX configs to these functions.
"""

from __future__ import annotations

from typing import Any

from core.config.engines import missing_engine_text, sbx_installed
from core.config.errors import FieldIssue
from core.config.schema import RunConfig
from core.estimate.library_probe import LibraryProbe

PROBE_MODULE = "core.worker.jax_probe"
WINDOWS_TEXT = "trains on the CPU: JAX has no CUDA on Windows; WSL2 is the way to the GPU"
CUDA_JAX_FIX = 'pip install "jax[cuda12]" (Linux; see the README\'s JAX part)'
JAX = LibraryProbe("jax", PROBE_MODULE, lambda: None if sbx_installed() else missing_engine_text())


def cached_jax_facts() -> dict[str, Any] | None:
    """The facts when known already (this process, or the cache file), without probing."""
    return JAX.cached()


def run_probe(timeout: float = 120.0) -> dict[str, Any]:
    """jax's facts from a child process with this interpreter (never cached); an error where sbx is not installed."""
    return JAX.run(timeout)


def jax_facts(refresh: bool = False, timeout: float = 120.0) -> dict[str, Any]:
    """The facts, probed once per interpreter and jax version (an error is not cached)."""
    return JAX.facts(refresh, timeout)


def _usable(facts: dict[str, Any] | None) -> bool | None:
    if not facts or "error" in facts:
        return None
    return bool(facts.get("cuda_available"))


def _name(facts: dict[str, Any] | None) -> str:
    return f"jax {(facts or {}).get('jax', '?')}"


def train_device(cfg: RunConfig, gpu_index: int | None, facts: dict[str, Any] | None,
                 platform: str) -> tuple[str, list[str]]:
    """(device, warnings) for an SBX run launched here; ``gpu_index`` is the detected GPU planned on, if any."""
    requested = cfg.runtime.device
    if requested == "cpu":
        return "cpu", []
    if platform == "win32":
        issue = device_issue(cfg, facts, platform)
        return "cpu", [issue.message if issue else WINDOWS_TEXT] if gpu_index is not None or issue else []
    usable = _usable(facts)
    if usable is None:  # not asked yet, or the probe failed: what the estimate assumes
        notes = [f"cannot tell which device the SBX run trains on: {facts['error']}"] if facts else []
        return (f"cuda:{gpu_index or 0}" if gpu_index is not None else "cpu"), notes
    if usable:
        return ("cuda:0" if requested in ("auto", "cuda") else requested), []
    issue = device_issue(cfg, facts, platform)
    if issue is not None:
        return "cpu", [issue.message]
    if gpu_index is not None:
        return "cpu", [f"trains on the CPU: this jax ({_name(facts)}) has no CUDA, though a GPU is present; "
                       f"{CUDA_JAX_FIX}, or set runtime.device to cpu to train on the CPU on purpose"]
    return "cpu", []


def device_issue(cfg: RunConfig, facts: dict[str, Any] | None, platform: str) -> FieldIssue | None:
    """Why an SBX launch must be refused: CUDA asked for where JAX has none (the worker would refuse it too)."""
    requested = cfg.runtime.device
    if not requested.startswith("cuda"):
        return None
    if platform == "win32":
        return FieldIssue("runtime.device", f"{requested} was asked for an SBX run but JAX has no CUDA on Windows (WSL2 is "
                                            "the way to the GPU): set runtime.device to auto or cpu, or runtime.engine: sb3")
    if _usable(facts) is not False:
        return None
    return FieldIssue("runtime.device", f"{requested} was asked for an SBX run but this jax ({_name(facts)}) has no CUDA: "
                                        f"{CUDA_JAX_FIX}, or set runtime.device to auto or cpu")


def device_reason(cfg: RunConfig, facts: dict[str, Any] | None, platform: str) -> str | None:
    """Why an SBX run trains on the CPU, in words (None: not for a JAX reason)."""
    if cfg.runtime.device == "cpu":
        return None
    if platform == "win32":
        return "cpu - JAX has no CUDA on Windows"
    if _usable(facts) is False:
        return f"cpu - {_name(facts)} has no CUDA"
    return None
