"""Torch's CPU threads when the config leaves them empty ("auto"): a count that does not fight the env processes.

Torch's own default (one thread per core) on a busy 2-core machine gave the laptop-8gb PPO config 97 steps/s
against 1,990 with one thread: its threads spin against the env processes and other programs for the same cores.
``bench/torch_threads.py`` (busy 2-core machine, 2026-11-26): one thread against torch's two gave the laptop-8gb
PPO update 1.5-1.7x the steps/s at 0.49-0.58x the CPU per env step, 4 dummy envs 2.3-2.9x at 0.29-0.32x.
So: one thread on 2 cores or fewer and when the network trains on a GPU (the CPU then only feeds it); else the
cores this process may use, less one per env process of a subprocess vec env, at most ``MAX_AUTO`` (that branch
is not measured yet). ``torch_threads`` is the one resolution: the worker, the tune's probes, the Configure form
and ``rlpanel estimate`` all ask it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_AUTO = 8  # past ~8 threads a small policy's matmuls gain nothing and the sync costs grow


def usable_cores() -> int:
    """The physical cores this process may run on (its CPU affinity; logical CPUs where psutil cannot tell)."""
    import psutil

    logical = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    physical = psutil.cpu_count(logical=False) or logical
    per_core = max(1, (psutil.cpu_count(logical=True) or logical) // physical)  # SMT siblings per core
    return max(1, logical // per_core)


def auto_torch_threads(cores: int, env_processes: int, gpu: bool) -> int:
    """The thread count "auto" resolves to, from the usable cores and the env processes the run starts."""
    if gpu or cores <= 2:
        return 1
    return max(1, min(MAX_AUTO, cores - env_processes))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class TorchThreads:
    """The torch threads a run uses here, and what they were resolved from."""

    count: int
    auto: bool            # the config left them empty
    cores: int            # usable physical cores here (the rule's input)
    env_processes: int    # env processes of a subprocess vec env (0: the envs step in the trainer)
    gpu: bool             # the network trains on a GPU

    def text(self) -> str:
        """``auto: 1 thread here (2 cores, 4 subprocess envs)``, ``3 threads (set)``."""
        if not self.auto:
            return f"{_plural(self.count, 'thread')} (set)"
        if self.gpu:
            why = "training on a GPU"
        else:
            parts = [_plural(self.cores, "core")]
            if self.env_processes:
                parts.append(_plural(self.env_processes, "subprocess env"))
            if self.count == MAX_AUTO and self.cores - self.env_processes > MAX_AUTO:
                parts.append(f"at most {MAX_AUTO}")
            why = ", ".join(parts)
        return f"auto: {_plural(self.count, 'thread')} here ({why})"

    def to_json(self) -> dict[str, object]:
        return {"count": self.count, "auto": self.auto, "cores": self.cores, "env_processes": self.env_processes,
                "gpu": self.gpu, "text": self.text()}


def torch_threads(configured: int | None, n_envs: int, subproc: bool, device: str,
                  cores: int | None = None) -> TorchThreads:
    """The configured count, or the "auto" one (``configured`` None), on ``device`` (``cpu``, ``cuda:0``)."""
    here = usable_cores() if cores is None else cores
    processes, gpu = (n_envs if subproc else 0), device.startswith("cuda")
    count = configured or auto_torch_threads(here, processes, gpu)
    return TorchThreads(count, not configured, here, processes, gpu)


def resolved_torch_threads(configured: int | None, n_envs: int, subproc: bool, device: str,
                           cores: int | None = None) -> int:
    """The count alone (``torch_threads``)."""
    return torch_threads(configured, n_envs, subproc, device, cores).count
