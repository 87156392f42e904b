"""What a run asks the cluster for, from its config and its fit estimate (a pure function).

GPU: the estimated GPU memory as a fraction of the target GPU's (0 for a CPU run), rounded up to
a hundredth, so Ray may place several small runs on one GPU and never more than fit. CPUs: one
for the learner, plus one per env process (``subproc`` vec envs; a ``dummy`` vec env steps its
envs in the learner's thread). Memory: the estimate's host term (buffers, env processes, the
worker). Without an estimate (an env that cannot be probed here) a run asks for its CPUs only.
CPUs are Ray's logical ones: a run asks for no more than the largest node has (``fit_node``), so 16
env processes on an 8-CPU node run slower rather than wait forever for a node that does not exist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.config.schema import RunConfig


@dataclass(frozen=True)
class JobResources:
    num_cpus: float
    num_gpus: float
    memory_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus, "memory_bytes": self.memory_bytes}

    def fit_node(self, node_cpus: float | None) -> tuple[JobResources, str | None]:
        """These resources with at most ``node_cpus`` CPUs (the largest node's), and what was cut, in words."""
        if node_cpus is None or node_cpus <= 0 or self.num_cpus <= node_cpus:
            return self, None
        cut = JobResources(float(node_cpus), self.num_gpus, self.memory_bytes)
        return cut, (f"asks for {node_cpus:g} CPUs, not {self.num_cpus:g} (the learner and one per env process): "
                     f"the cluster's largest node has {node_cpus:g}; its env processes share them")

    def describe(self) -> str:
        gpu = f", {self.num_gpus:g} GPU" if self.num_gpus else ""
        mem = f", {self.memory_bytes / 2**20:,.0f} MiB" if self.memory_bytes else ""
        return f"{self.num_cpus:g} CPU{gpu}{mem}"


def job_resources(cfg: RunConfig, estimate: dict[str, Any] | None) -> JobResources:
    """The resources of a run's Ray job (``estimate``: ``FitEstimate.to_json()``, or None/an error)."""
    env_processes = cfg.runtime.n_envs if cfg.runtime.vec_env != "dummy" and not cfg.is_baseline else 0
    cpus = float(1 + env_processes)
    usable = bool(estimate) and "error" not in (estimate or {})
    if not usable or estimate is None:
        return JobResources(cpus, 0.0, 0)
    gpus = 0.0
    capacity = int(estimate.get("capacity_bytes") or 0)
    planned = estimate.get("planned_device") or estimate.get("train_device") or ""  # the nodes', not this machine's
    on_gpu = bool(estimate.get("on_gpu")) and not str(planned).startswith("cpu")
    if on_gpu and capacity > 0 and not cfg.is_baseline:
        share = int(estimate.get("gpu_bytes") or 0) / capacity
        gpus = min(1.0, max(0.01, math.ceil(share * 100 - 1e-9) / 100))
    return JobResources(cpus, gpus, max(0, int(estimate.get("host_bytes") or 0)))
