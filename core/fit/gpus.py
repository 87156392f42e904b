"""Target GPU profiles (``configs/gpus.yaml``) and the GPUs of this machine (through NVML).

A profile lets a user plan on a laptop for a card they do not have. ``get_profile("auto")``
is the first detected GPU, or ``None`` when this machine has none (the run goes on the CPU
and only host memory counts).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config.errors import ConfigError, FieldIssue
from core.telemetry.nvml import detect_gpus
from core.util.paths import configs_dir
from core.util.yaml_reader import read_yaml_mapping

GPUS_FILE_NAME = "gpus.yaml"
MIB = 1 << 20
# When a detected card's generation is unknown (a future one): the newest constants.
FALLBACK_GENERATION = "blackwell"


@dataclass(frozen=True)
class GpuProfile:
    """A GPU as the estimate sees it: capacity and the fixed costs of using it from torch."""

    name: str
    memory_bytes: int
    compute_capability: str
    tf32: bool
    generation: str
    context_bytes: int      # CUDA context + lazily loaded kernels, outside torch's allocator
    workspace_bytes: int    # cuBLAS/cuBLASLt workspaces, inside torch's allocator
    detected: bool = False
    index: int | None = None

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / (1 << 30)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "memory_bytes": self.memory_bytes, "memory_gib": round(self.memory_gib, 2),
                "compute_capability": self.compute_capability, "tf32": self.tf32, "generation": self.generation,
                "context_bytes": self.context_bytes, "workspace_bytes": self.workspace_bytes,
                "detected": self.detected, "index": self.index}


@dataclass(frozen=True)
class AllocatorModel:
    """How much torch's caching allocator holds beyond the live tensors."""

    slack_fraction: float = 0.10
    min_bytes: int = 4 * MIB


@dataclass(frozen=True)
class GpuTable:
    profiles: tuple[GpuProfile, ...]
    generations: dict[str, dict[str, float]]
    allocator: AllocatorModel


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def generation_for(compute_capability: str | tuple[int, int] | None) -> str:
    """The architecture generation of a compute capability (``"8.9"`` or ``(8, 9)``)."""
    major, minor = _cc_tuple(compute_capability)
    if major <= 0:
        return FALLBACK_GENERATION
    if major == 6:
        return "pascal"
    if major == 7:
        return "turing" if minor >= 5 else "volta"
    if major == 8:
        return "ada" if minor >= 9 else "ampere"
    if major == 9:
        return "hopper"
    return "blackwell" if major in (10, 11, 12) else ("pascal" if major < 6 else FALLBACK_GENERATION)


def _cc_tuple(cc: Any) -> tuple[int, int]:
    if isinstance(cc, (tuple, list)) and len(cc) == 2:
        return int(cc[0]), int(cc[1])
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", str(cc or ""))
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _cc_text(cc: Any) -> str:
    major, minor = _cc_tuple(cc)
    return f"{major}.{minor}" if major else "unknown"


@functools.lru_cache(maxsize=4)
def _load_table(path: Path | None = None) -> GpuTable:
    path = path or configs_dir() / GPUS_FILE_NAME
    try:
        data = read_yaml_mapping(path)
    except ValueError as exc:
        raise ConfigError([FieldIssue("target_gpu", f"cannot read the GPU profiles {path}: {exc}")]) from None
    generations = {str(k): dict(v) for k, v in (data.get("generations") or {}).items()}
    alloc = data.get("allocator") or {}
    allocator = AllocatorModel(float(alloc.get("slack_fraction", 0.10)), int(float(alloc.get("min_mib", 4)) * MIB))
    profiles = tuple(_profile(entry, generations) for entry in data.get("profiles") or [])
    return GpuTable(profiles, generations, allocator)


def _constants(generation: str, generations: dict[str, dict[str, float]], entry: dict[str, Any]) -> tuple[int, int]:
    gen = generations.get(generation) or generations.get(FALLBACK_GENERATION) or {}
    context = float(entry.get("context_mib", gen.get("context_mib", 500)))
    workspace = float(entry.get("workspace_mib", gen.get("workspace_mib", 64)))
    return int(context * MIB), int(workspace * MIB)


def _profile(entry: dict[str, Any], generations: dict[str, dict[str, float]]) -> GpuProfile:
    cc = _cc_text(entry.get("compute_capability"))
    generation = str(entry.get("generation") or generation_for(cc))
    if "memory_mib" in entry:
        memory = int(float(entry["memory_mib"]) * MIB)
    else:
        memory = int(float(entry.get("memory_gib", 0)) * (1 << 30))
    context, workspace = _constants(generation, generations, entry)
    tf32 = bool(entry.get("tf32", _cc_tuple(cc)[0] >= 8))
    return GpuProfile(str(entry["name"]), memory, cc, tf32, generation, context, workspace)


def known_profiles() -> list[GpuProfile]:
    """The shipped target profiles, in file order."""
    return list(_load_table().profiles)


def allocator_model() -> AllocatorModel:
    return _load_table().allocator


_detected: list[GpuProfile] | None = None


def detected_profiles(refresh: bool = False) -> list[GpuProfile]:
    """This machine's GPUs as profiles (empty without NVML or without an NVIDIA GPU)."""
    global _detected
    if _detected is not None and not refresh:
        return list(_detected)
    infos = detect_gpus()
    table = _load_table()
    found = []
    for info in infos:
        if not info.memory_total_bytes:
            continue  # NVML could not read this card's memory: nothing to plan against
        cc = _cc_text(info.compute_capability)
        generation = generation_for(cc)
        context, workspace = _constants(generation, table.generations, {})
        index = info.index
        name = f"this machine: {getattr(info, 'name', None) or 'GPU'}" + (f" (GPU {index})" if len(infos) > 1 else "")
        found.append(GpuProfile(name, info.memory_total_bytes, cc,
                                _cc_tuple(cc)[0] >= 8, generation, context, workspace, detected=True, index=index))
    _detected = found
    return list(found)


def all_profiles() -> list[GpuProfile]:
    return detected_profiles() + known_profiles()


def get_profile(name: str) -> GpuProfile | None:
    """A profile by name (case and spacing ignored), or ``auto``: the first detected GPU or ``None``.

    ``this machine`` (or ``detected``, ``gpu0``, ``cuda:1``) names a detected GPU and is an error
    when there is none; an unknown name raises ``ConfigError`` listing the known names.
    """
    key = _norm(name or "auto")
    detected = detected_profiles()
    if key == "auto":
        return detected[0] if detected else None
    index_match = re.fullmatch(r"(?:gpu|cuda)(\d+)", key)
    if key in ("thismachine", "detected", "cuda") or index_match:
        want = int(index_match.group(1)) if index_match else None
        for profile in detected:
            if want is None or profile.index == want:
                return profile
        raise ConfigError([FieldIssue("target_gpu", (
            f"{name!r} asks for a GPU of this machine, but {'none was' if not detected else 'no such one is'} "
            f"detected (NVML): choose a profile such as 'RTX 4060 Laptop', or 'auto' to plan for the CPU"))])
    for profile in all_profiles():
        if _norm(profile.name) == key:
            return profile
    for profile in detected:  # the bare NVML name of a detected card, e.g. "NVIDIA GeForce RTX 3060"
        if _norm(profile.name).endswith(key) or _norm(profile.name.split(": ", 1)[-1]).startswith(key):
            return profile
    known = ", ".join(p.name for p in known_profiles())
    raise ConfigError([FieldIssue("target_gpu", f"unknown GPU {name!r}; known: {known}, or auto / this machine")])


__all__ = ["AllocatorModel", "GpuProfile", "all_profiles", "allocator_model", "detected_profiles",
           "generation_for", "get_profile", "known_profiles"]
