"""Which device a worker launched here really trains on, without importing torch.

NVML seeing a GPU does not mean torch can use it: a plain ``pip install torch`` on Windows is a
CPU build. ``torch_facts()`` asks the worker's own Python once (``python -m core.worker.torch_probe``
in a subprocess) and caches the answer per interpreter and torch version, in memory and in the
user folder. ``train_device()`` turns a config, the target GPU and those facts into the device
and the warnings the fit bar, ``rlpanel estimate`` and Launch show. An SBX run trains where JAX can: its facts are
jax's (``engine_facts``), its rule ``core.estimate.jax_device``'s.
"""

from __future__ import annotations

import sys
from typing import Any

from core.config.errors import FieldIssue
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.estimate import jax_device
from core.estimate.families.family import policy_kind
from core.estimate.gpus import GpuProfile
from core.estimate.library_probe import LibraryProbe
from core.util.threads import TorchThreads, torch_threads

PROBE_MODULE = "core.worker.torch_probe"
CUDA_TORCH_FIX = ("install a CUDA build of torch (pip install torch --index-url https://download.pytorch.org/whl/cu126, "
                  "see the README's CUDA section)")
TORCH = LibraryProbe("torch", PROBE_MODULE, lambda: None if _torch_installed() else
                     "torch is not installed in this Python; pip install torch")


def _torch_installed() -> bool:
    return TORCH.version() is not None


def cached_torch_facts() -> dict[str, Any] | None:
    """The facts when known already (this process, or the cache file), without probing."""
    return TORCH.cached()


def torch_facts(refresh: bool = False, timeout: float = 120.0) -> dict[str, Any]:
    """torch/CUDA/SB3 facts, probed once per interpreter and torch version (an error is not cached)."""
    return TORCH.facts(refresh, timeout)


def engine_facts(cfg: RunConfig, refresh: bool = False) -> dict[str, Any]:
    """The facts of the library the run's engine trains with: jax's for an SBX run, torch's otherwise."""
    return jax_device.jax_facts(refresh) if cfg.runtime.engine == "sbx" else torch_facts(refresh)


def cached_engine_facts(cfg: RunConfig) -> dict[str, Any] | None:
    """``engine_facts`` when known already, without probing."""
    return jax_device.cached_jax_facts() if cfg.runtime.engine == "sbx" else cached_torch_facts()


def cuda_usable(facts: dict[str, Any] | None) -> bool | None:
    """Whether torch can use CUDA here (``None``: unknown)."""
    if not facts or "error" in facts:
        return None
    return bool(facts.get("cuda_available"))


def _torch_name(facts: dict[str, Any]) -> str:
    return f"torch {facts.get('torch', '?')}"


def train_device(cfg: RunConfig, gpu_index: int | None, facts: dict[str, Any] | None,
                 platform: str = sys.platform) -> tuple[str, list[str]]:
    """(device, warnings) for a worker launched here; ``gpu_index`` is the detected GPU planned on, if any; ``facts``
    the engine's (``engine_facts``)."""
    if cfg.runtime.engine == "sbx" and not cfg.is_baseline:
        return jax_device.train_device(cfg, gpu_index, facts, platform)
    requested = cfg.runtime.device
    if requested == "cpu":
        return "cpu", []
    usable = cuda_usable(facts)
    if usable is None:  # not asked yet, or the probe failed: what the estimate assumes
        notes = [f"cannot tell which device the worker trains on: {facts['error']}"] if facts else []
        return (f"cuda:{gpu_index or 0}" if gpu_index is not None else "cpu"), notes
    assert facts is not None
    if usable:
        return ("cuda:0" if requested in ("auto", "cuda") else requested), []
    if requested.startswith("cuda"):
        issue = device_issue(cfg, facts)
        return "cpu", [issue.message] if issue else []
    if gpu_index is not None:
        return "cpu", [f"trains on the CPU: this torch build ({_torch_name(facts)}) has no CUDA, though a GPU is "
                       f"present; {CUDA_TORCH_FIX}, or set runtime.device to cpu to train on the CPU on purpose"]
    return "cpu", []


def worker_threads(cfg: RunConfig, device: str, cores: int | None = None) -> TorchThreads:
    """The torch threads a worker (or a tune's probe) of ``cfg`` uses on ``device`` here (``core.util.threads``)."""
    rt = cfg.runtime
    return torch_threads(rt.torch_threads, rt.n_envs, rt.vec_env != "dummy", device, cores)


def device_issue(cfg: RunConfig, facts: dict[str, Any] | None, platform: str = sys.platform) -> FieldIssue | None:
    """Why a launch must be refused: the config asks for CUDA that this torch (an SBX run: this jax) cannot use."""
    if cfg.runtime.engine == "sbx" and not cfg.is_baseline:
        return jax_device.device_issue(cfg, facts, platform)
    requested = cfg.runtime.device
    if not requested.startswith("cuda") or cuda_usable(facts) is not False:
        return None
    assert facts is not None
    return FieldIssue("runtime.device", f"{requested} was asked for but this torch build ({_torch_name(facts)}) has no "
                                        f"CUDA: {CUDA_TORCH_FIX}, or set runtime.device to auto or cpu")


def device_reason(cfg: RunConfig, device: str, local: GpuProfile | None, facts: dict[str, Any] | None,
                  platform: str = sys.platform) -> str:
    """``device`` and why, in words: ``cpu - torch 2.13.0+cpu has no CUDA``, ``cuda:0 - NVIDIA RTX 4060``."""
    if device != "cpu":
        return f"{device} - {local.name.split(': ', 1)[-1]}" if local is not None else device
    if cfg.runtime.device == "cpu":
        return "cpu - runtime.device is cpu"
    if cfg.runtime.engine == "sbx" and not cfg.is_baseline:
        return jax_device.device_reason(cfg, facts, platform) or "cpu - no NVIDIA GPU detected here (NVML)"
    if cuda_usable(facts) is False:
        return f"cpu - {_torch_name(facts or {})} has no CUDA"
    return "cpu - no NVIDIA GPU detected here (NVML)" if local is None else "cpu"


# PPO/A2C with an MLP policy below this many parameters ran slower on a GPU than on the CPU in every
# measurement: 549 steps/s on an H100 against 1,183 on its CPU (64-64 net, CartPole, 2026-11-26); SB3
# warns the same. The heavy preset (1.3 M parameters, batch 4096) was 12x faster on the GPU.
SMALL_MLP_PARAMETERS = 100_000


def policy_warnings(cfg: RunConfig, spaces: EnvSpaces, device: str, parameter_count: int) -> list[str]:
    """A device that does not suit the policy: a small MLP of PPO/A2C on a GPU, an image policy on the CPU."""
    if cfg.spec is None:
        return []
    kind = policy_kind(cfg, spaces)
    if device.startswith("cuda") and cfg.spec.on_policy and kind == "MlpPolicy" and parameter_count < SMALL_MLP_PARAMETERS:
        return [f"{cfg.algo} with a small MLP policy ({parameter_count:,} parameters) usually trains faster on the CPU: "
                "measured 549 steps/s on an H100 against 1,183 on its CPU for PPO's 64-64 net; run rlpanel tune "
                "(Tune...) to measure it here, or set runtime.device to cpu"]
    if device == "cpu" and kind == "CnnPolicy":
        return ["an image policy (CnnPolicy) trains on the CPU: expect it to be many times slower than on a GPU"]
    return []
