"""What the fit estimate says: terms, verdicts, the suggested fix (plain data, no arithmetic).

``FitEstimate`` crosses from ``core`` to the window and the CLI as this object; ``to_json()`` is
for ``rlpanel estimate --json`` and the queue's state file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.telemetry.guard import SYSMEM_FALLBACK_FIX
from core.util.threads import TorchThreads

MIB = 1 << 20
FITS, TIGHT, NO_FIT = "fits", "tight", "does not fit"
FIT_BELOW = 0.80   # below this share of capacity: fits
TIGHT_UPTO = 0.95  # up to and including this share: tight; above: does not fit
CRAWL_TEXT = ("on Windows the driver moves the rest to system RAM and the run slows several times rather than failing "
              f"(sysmem fallback; to have it fail at once instead: {SYSMEM_FALLBACK_FIX})")


@dataclass(frozen=True)
class Term:
    name: str
    where: str  # "gpu" | "host"
    bytes: int
    note: str = ""

    def to_json(self, total: int) -> dict[str, Any]:
        return {"name": self.name, "where": self.where, "bytes": self.bytes,
                "share": round(self.bytes / total, 4) if total else 0.0, "note": self.note}


@dataclass(frozen=True)
class Suggestion:
    """A change the GUI can apply at ``path`` (a ``--set`` path); it fits when re-estimated."""

    path: str
    old: Any
    new: Any
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "old": self.old, "new": self.new, "text": self.text}


@dataclass
class FitEstimate:
    verdict: str
    capacity_bytes: int
    gpu_bytes: int
    host_bytes: int
    terms: list[Term]
    gpu_name: str | None
    host_verdict: str
    host_capacity_bytes: int
    on_gpu: bool
    parameter_count: int
    allocator_bytes: int = 0        # what torch's caching allocator holds (cf. max_memory_reserved)
    buffer_full_at_step: int | None = None
    suggestion: Suggestion | None = None
    notes: list[str] = field(default_factory=list)
    train_device: str = ""          # what a worker launched here trains on: cuda:0, cpu (core.estimate.device)
    warnings: list[str] = field(default_factory=list)  # sentences the user must read before launch
    advice: list[str] = field(default_factory=list)    # those of the warnings that advise (a faster device), never ask
    planned_device: str = ""        # the device the terms assume: train_device, or a target card's cuda:0
    this_machine: FitEstimate | None = None  # when planned for another machine's card: this one's estimate
    gpu_source: str = ""            # where the card's fixed costs come from: "measured on this card 2026-11-26", ...
    train_device_reason: str = ""   # this machine's device and why: "cpu - torch 2.13.0+cpu has no CUDA"
    gpu_history: str = ""           # how the last runs on the card compared: "last 5 runs: 0.94-1.03 of estimate"
    planned_timesteps: int | None = None  # the steps SB3 trains: whole rollouts (core.config.steps); None: a baseline
    torch_threads: TorchThreads | None = None  # the worker's torch threads here: configured or "auto" resolved
    network_source: str = ""        # "measured from your network" (an own network, core.estimate.measured); "": the formulas
    sysmem_fallback: bool = False   # does not fit a card of this Windows machine: the run crawls rather than fails

    @property
    def over_capacity_text(self) -> str:
        """What past the GPU's capacity means here: ``CRAWL_TEXT`` on a Windows target, "" otherwise."""
        return CRAWL_TEXT if self.sysmem_fallback else ""

    @property
    def usage(self) -> float:
        """The share of the verdict's capacity used (GPU, or host for CPU runs)."""
        used = self.gpu_bytes if self.on_gpu else self.host_bytes
        return used / self.capacity_bytes if self.capacity_bytes else float("inf")

    @property
    def host_usage(self) -> float:
        return self.host_bytes / self.host_capacity_bytes if self.host_capacity_bytes else float("inf")

    @property
    def host_side(self) -> FitEstimate:
        """The estimate whose host terms a launch here holds: this machine's when the terms are planned for another
        machine's card. The host RAM they are judged against is this machine's, and here the worker may train on the
        CPU without CUDA's ~1 GiB of host memory that the target's worker holds (the fit bar's Host row, the text of
        ``rlpanel estimate`` and Launch's question all read this one; ``to_json`` keeps the target's for a cluster job)."""
        return self.this_machine or self

    @property
    def fits(self) -> bool:
        """Whether a launch here fits: the GPU the terms are planned for, and this machine's host RAM."""
        return self.verdict != NO_FIT and self.host_side.host_verdict != NO_FIT

    @property
    def device_warnings(self) -> list[str]:
        """The warnings about where the run trains: what Launch asks about (advice is shown, not asked)."""
        return [w for w in self.warnings if w not in self.advice]

    def term(self, name: str) -> Term | None:
        return next((t for t in self.terms if t.name == name), None)

    @property
    def main_side(self) -> str:
        """The side that decides: the one that does not fit (the fuller one if both), else the run's device."""
        gpu_usage = self.usage if self.on_gpu and self.verdict != FITS else -1.0
        host_usage = self.host_usage if self.host_verdict != FITS else -1.0
        if gpu_usage < 0 and host_usage < 0:
            return "gpu" if self.on_gpu else "host"
        return "gpu" if gpu_usage >= host_usage else "host"

    def biggest(self, where: str | None = None) -> Term:
        side = where or self.main_side
        return max((t for t in self.terms if t.where == side), key=lambda t: t.bytes)

    def to_json(self) -> dict[str, Any]:
        totals = {"gpu": self.gpu_bytes, "host": self.host_bytes}
        big = self.biggest()
        return {
            "verdict": self.verdict, "fits": NO_FIT not in (self.verdict, self.host_verdict),
            "capacity_bytes": self.capacity_bytes, "usage": round(self.usage, 4),
            "gpu_name": self.gpu_name, "on_gpu": self.on_gpu,
            "gpu_bytes": self.gpu_bytes, "host_bytes": self.host_bytes,
            "host_verdict": self.host_verdict, "host_capacity_bytes": self.host_capacity_bytes,
            "host_usage": round(self.host_usage, 4), "allocator_bytes": self.allocator_bytes,
            "parameter_count": self.parameter_count, "buffer_full_at_step": self.buffer_full_at_step,
            "terms": [t.to_json(totals[t.where]) for t in self.terms],
            "biggest_term": {"name": big.name, "where": big.where, "bytes": big.bytes},
            "suggestion": self.suggestion.to_json() if self.suggestion else None,
            "notes": list(self.notes),
            "train_device": self.train_device, "warnings": list(self.warnings),
            "planned_device": self.planned_device or self.train_device, "gpu_source": self.gpu_source,
            "gpu_history": self.gpu_history, "train_device_reason": self.train_device_reason,
            "this_machine": self.this_machine.to_json() if self.this_machine is not None else None,
            "planned_timesteps": self.planned_timesteps,
            "torch_threads": self.torch_threads.to_json() if self.torch_threads is not None else None,
            # an own network's counts are measured: said only then (the formulas' estimates read as before)
            **({"network_source": self.network_source} if self.network_source else {}),
            # this Windows machine's card, past its capacity: said only then (elsewhere an estimate reads as before)
            **({"sysmem_fallback": True, "over_capacity": self.over_capacity_text} if self.sysmem_fallback else {}),
        }


def verdict_for(used: int, capacity: int) -> str:
    if capacity <= 0:
        return NO_FIT
    share = used / capacity
    if share < FIT_BELOW:
        return FITS
    return TIGHT if share <= TIGHT_UPTO else NO_FIT
