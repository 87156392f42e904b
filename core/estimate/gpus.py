"""Target GPU profiles (``configs/gpus.yaml``) and the GPUs of this machine (through NVML).

A profile lets a user plan on a laptop for a card they do not have. ``get_profile("auto")``
is the first detected GPU, or ``None`` when this machine has none (the run goes on the CPU
and only host memory counts).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from core.config.errors import ConfigError, FieldIssue
from core.estimate.calibration import Calibration, lookup
from core.telemetry.nvml import detect_gpus, gpu_uuids, nvml_status
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
    context_bytes: int      # outside torch's allocator for an MLP: CUDA context, lazily loaded kernels, handles
    workspace_bytes: int    # cuBLAS/cuBLASLt workspaces, inside torch's allocator
    detected: bool = False
    index: int | None = None
    cudnn_bytes: int = 16 * MIB            # outside the allocator once a convolution runs
    cudnn_workspace_bytes: int = 20 * MIB  # cuDNN's workspace, inside the allocator
    eager_bytes: int = 958 * MIB           # outside the allocator with CUDA_MODULE_LOADING=EAGER
    source: str = ""        # where the constants come from: "the table for ada", "measured on this card 2026-11-26"
    uuid: str | None = None  # NVML's UUID of a detected card (what a calibration is keyed by)
    driver: str | None = None
    history: tuple[float, ...] = ()  # the last runs on this card: own peak / estimate, one measure, newest first

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / (1 << 30)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "memory_bytes": self.memory_bytes, "memory_gib": round(self.memory_gib, 2),
                "compute_capability": self.compute_capability, "tf32": self.tf32, "generation": self.generation,
                "context_bytes": self.context_bytes, "workspace_bytes": self.workspace_bytes,
                "cudnn_bytes": self.cudnn_bytes, "cudnn_workspace_bytes": self.cudnn_workspace_bytes,
                "detected": self.detected, "index": self.index, "source": self.source, "uuid": self.uuid}


@dataclass(frozen=True)
class AllocatorModel:
    """How torch's caching allocator reserves for the live tensors (configs/gpus.yaml, ``allocator``)."""

    cache_factor: float = 1.5
    segment_bytes: int = 2 * MIB
    small_segment_bytes: int = 2 * MIB

    def reserved(self, live: int, workspaces: int) -> int:
        """Bytes reserved: the workspaces, and the live tensors with the blocks cached beside them in
        whole segments; never less than the one small-pool segment every model holds."""
        cached = -(-int(self.cache_factor * live) // self.segment_bytes) * self.segment_bytes
        return workspaces + max(self.small_segment_bytes, cached)


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
    allocator = AllocatorModel(float(alloc.get("cache_factor", 1.5)), int(float(alloc.get("segment_mib", 2)) * MIB),
                               int(float(alloc.get("small_segment_mib", 2)) * MIB))
    profiles = tuple(_profile(entry, generations) for entry in data.get("profiles") or [])
    return GpuTable(profiles, generations, allocator)


class Constants(TypedDict):
    """A generation's fixed costs in bytes: GpuProfile's fields of the same names."""

    context_bytes: int
    workspace_bytes: int
    cudnn_bytes: int
    cudnn_workspace_bytes: int
    eager_bytes: int


_DEFAULTS_MIB = {"context_mib": 742, "workspace_mib": 64, "cudnn_mib": 16, "cudnn_workspace_mib": 20, "eager_mib": 958}


def constants(generation: str, generations: dict[str, dict[str, float]] | None = None,
              entry: dict[str, Any] | None = None) -> Constants:
    """The generation's fixed costs: a profile's own keys first (``context_mib``, ...), then its generation's."""
    table = _load_table().generations if generations is None else generations
    gen = table.get(generation) or table.get(FALLBACK_GENERATION) or {}
    own = entry or {}

    def mib(key: str) -> int:
        return int(float(own.get(key, gen.get(key, _DEFAULTS_MIB[key]))) * MIB)

    return Constants(context_bytes=mib("context_mib"), workspace_bytes=mib("workspace_mib"), cudnn_bytes=mib("cudnn_mib"),
                     cudnn_workspace_bytes=mib("cudnn_workspace_mib"), eager_bytes=mib("eager_mib"))


def _profile(entry: dict[str, Any], generations: dict[str, dict[str, float]]) -> GpuProfile:
    cc = _cc_text(entry.get("compute_capability"))
    generation = str(entry.get("generation") or generation_for(cc))
    if "memory_mib" in entry:
        memory = int(float(entry["memory_mib"]) * MIB)
    else:
        memory = int(float(entry.get("memory_gib", 0)) * (1 << 30))
    tf32 = bool(entry.get("tf32", _cc_tuple(cc)[0] >= 8))
    return GpuProfile(str(entry["name"]), memory, cc, tf32, generation, **constants(generation, generations, entry),
                      source=f"the table for {generation}")


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
    uuids = gpu_uuids()
    driver = nvml_status().driver_version if infos else None
    found = []
    for info in infos:
        if not info.memory_total_bytes:
            continue  # NVML could not read this card's memory: nothing to plan against
        cc = _cc_text(info.compute_capability)
        generation = generation_for(cc)
        index = info.index
        name = f"this machine: {getattr(info, 'name', None) or 'GPU'}" + (f" (GPU {index})" if len(infos) > 1 else "")
        profile = GpuProfile(name, info.memory_total_bytes, cc, _cc_tuple(cc)[0] >= 8, generation,
                             **constants(generation, table.generations), detected=True, index=index,
                             source=f"the table for {generation}",
                             uuid=uuids[index] if index < len(uuids) else None, driver=driver)
        found.append(calibrated(profile))
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


def calibrated(profile: GpuProfile) -> GpuProfile:
    """A detected card with the constants measured on it (``rlpanel calibrate``) when a calibration
    matches its UUID, driver and this torch; else as it is."""
    cal = lookup(profile.uuid, profile.driver)
    return with_calibration(profile, cal) if cal is not None else profile


def with_calibration(profile: GpuProfile, cal: Calibration) -> GpuProfile:
    return dataclasses.replace(profile, context_bytes=cal.context_bytes, workspace_bytes=cal.workspace_bytes,
                               cudnn_bytes=cal.cudnn_bytes, cudnn_workspace_bytes=cal.cudnn_workspace_bytes,
                               source=f"measured on this card {cal.day}")


def with_history(profile: GpuProfile, ratios: tuple[float, ...]) -> GpuProfile:
    """A detected card with how its last runs compared with their estimates (``core.run.card_history``)."""
    return dataclasses.replace(profile, history=tuple(ratios)) if profile.detected else profile


def history_factor(profile: GpuProfile) -> float | None:
    """The correction the last runs call for: their median peak/estimate when at least 3 ran above 1.03
    (an estimate that ran high is kept: it errs on the safe side); None otherwise."""
    if len(profile.history) < 3:
        return None
    ordered = sorted(profile.history)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return median if median > 1.03 else None


def history_text(profile: GpuProfile) -> str:
    """``last 5 runs: 0.94-1.03 of estimate`` (empty without runs)."""
    if not profile.history:
        return ""
    low, high = min(profile.history), max(profile.history)
    runs = f"last {len(profile.history)} run{'s' if len(profile.history) > 1 else ''}"
    return f"{runs}: {low:.2f}-{high:.2f} of estimate" if high > low else f"{runs}: {low:.2f} of estimate"


def without_calibration(profile: GpuProfile) -> GpuProfile:
    """``profile`` with the table's constants for its generation (``bench/vram_check.py --table``)."""
    return dataclasses.replace(profile, **constants(profile.generation), source=f"the table for {profile.generation}")


__all__ = ["AllocatorModel", "GpuProfile", "all_profiles", "allocator_model", "calibrated", "constants",
           "detected_profiles", "generation_for", "get_profile", "history_factor", "history_text", "known_profiles",
           "with_calibration", "with_history", "without_calibration"]
