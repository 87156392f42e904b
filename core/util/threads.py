"""Torch's CPU threads when the config leaves them empty ("auto"): a count that does not fight the env processes.

Torch's own default (one thread per core) on a busy 2-core machine gave the laptop-8gb PPO config 97 steps/s
against 1,990 with one thread: its threads spin against the env processes and other programs for the same cores.
So: one thread on 2 cores or fewer and when the network trains on a GPU (the CPU then only feeds it); else the
cores this process may use, less one per env process of a subprocess vec env, at most ``MAX_AUTO``.
"""

from __future__ import annotations

import os

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


def resolved_torch_threads(configured: int | None, n_envs: int, subproc: bool, device: str,
                           cores: int | None = None) -> int:
    """The configured count, or the "auto" one (``configured`` None)."""
    if configured:
        return configured
    return auto_torch_threads(usable_cores() if cores is None else cores, n_envs if subproc else 0,
                              device.startswith("cuda"))
