"""Will this run fit? GPU and host memory before launch, with a breakdown, a verdict and a fix.

Pure arithmetic over the run config, the env's spaces (``core.config.spaces``) and a GPU profile
(``core.gpus``): no torch, so the GUI can call it on every keystroke. The counts mirror SB3's
own code (``core.sb3_shapes``); the tests compare them with real SB3 objects.

GPU terms (on the host instead when the run uses the CPU):
  cuda_context     CUDA context + cuBLAS workspaces, per GPU generation (configs/gpus.yaml)
  parameters       every network held: actor, critic(s), target networks, log_std, ent_coef
  gradients        one float per trainable parameter (targets get none)
  optimizer        Adam 2x / RMSprop 1x the parameters it steps, plus step counters
  activations      the largest pass: training batch, n_envs inference or the optimizer step
  batch_copies     the sampled batch copied to the device
  allocator_slack  torch's caching allocator: max(min, fraction x what it holds)
Host terms:
  rollout_buffer | replay_buffer, vecnormalize, worker_runtime, env_processes

stable-baselines3 keeps its buffers in host RAM as numpy arrays and copies one sampled batch
to the GPU per gradient step; the estimate says so instead of putting them on the GPU.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from core import sb3_shapes as shapes
from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces, check_spaces
from core.gpus import AllocatorModel, GpuProfile, allocator_model

MIB = 1 << 20
FITS, TIGHT, NO_FIT = "fits", "tight", "does not fit"
FIT_BELOW = 0.80   # below this share of capacity: fits
TIGHT_UPTO = 0.95  # up to and including this share: tight; above: does not fit

# Host RSS of the worker itself: python + numpy + gymnasium + torch + SB3, measured at ~325 MiB
# after a short CPU PPO run (torch 2.13 CPU, Linux); a CUDA build adds the CUDA runtime, cuBLAS
# and the host side of the context (approximate, not measured on this machine).
WORKER_RUNTIME_CPU = 350 * MIB
WORKER_RUNTIME_CUDA_EXTRA = 1024 * MIB
# Private memory (USS) of one SubprocVecEnv process with a classic-control env. A spawned or
# forkserver child imports stable_baselines3 (and so torch) to unpickle its worker function:
# measured ~155 MiB; a forked child shares its parent's pages until it writes them.
ENV_PROCESS_SPAWN = 160 * MIB
ENV_PROCESS_FORK = 16 * MIB


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

    @property
    def usage(self) -> float:
        """The share of the verdict's capacity used (GPU, or host for CPU runs)."""
        used = self.gpu_bytes if self.on_gpu else self.host_bytes
        return used / self.capacity_bytes if self.capacity_bytes else float("inf")

    @property
    def host_usage(self) -> float:
        return self.host_bytes / self.host_capacity_bytes if self.host_capacity_bytes else float("inf")

    @property
    def fits(self) -> bool:
        return self.verdict != NO_FIT and self.host_verdict != NO_FIT

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
            "verdict": self.verdict, "fits": NO_FIT not in (self.verdict, self.host_verdict), "capacity_bytes": self.capacity_bytes, "usage": round(self.usage, 4),
            "gpu_name": self.gpu_name, "on_gpu": self.on_gpu,
            "gpu_bytes": self.gpu_bytes, "host_bytes": self.host_bytes,
            "host_verdict": self.host_verdict, "host_capacity_bytes": self.host_capacity_bytes,
            "host_usage": round(self.host_usage, 4), "allocator_bytes": self.allocator_bytes,
            "parameter_count": self.parameter_count, "buffer_full_at_step": self.buffer_full_at_step,
            "terms": [t.to_json(totals[t.where]) for t in self.terms],
            "biggest_term": {"name": big.name, "where": big.where, "bytes": big.bytes},
            "suggestion": self.suggestion.to_json() if self.suggestion else None,
            "notes": list(self.notes),
        }


def verdict_for(used: int, capacity: int) -> str:
    if capacity <= 0:
        return NO_FIT
    share = used / capacity
    if share < FIT_BELOW:
        return FITS
    return TIGHT if share <= TIGHT_UPTO else NO_FIT


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
    issues = check_spaces(cfg, spaces.action_kind)
    if issues:
        raise ConfigError(issues)
    host_capacity = int(host_memory_bytes) if host_memory_bytes else host_memory_total()
    result = _estimate(cfg, spaces, gpu, host_capacity, allocator_model())
    if suggest and (result.verdict != FITS or result.host_verdict != FITS):
        from core.estimate_fix import suggest_fix  # the search re-estimates; kept apart for size

        result.suggestion = suggest_fix(cfg, spaces, gpu, host_capacity, result)
    return result


def _estimate(cfg: RunConfig, spaces: EnvSpaces, gpu: GpuProfile | None, host_capacity: int,
              alloc: AllocatorModel) -> FitEstimate:
    notes: list[str] = []
    if cfg.is_baseline:  # a fixed policy: no networks, nothing on the GPU
        terms: list[Term] = []
        _host_terms(cfg, spaces, False, terms, notes)
        host_bytes = sum(t.bytes for t in terms)
        verdict = verdict_for(host_bytes, host_capacity)
        return FitEstimate(verdict, host_capacity, 0, host_bytes, terms, None, verdict, host_capacity, False,
                           0, 0, None, None, [f"the {cfg.algo} baseline holds no network: host memory only"])
    device = cfg.runtime.device
    on_gpu = gpu is not None and device != "cpu"
    if gpu is None and device.startswith("cuda"):
        notes.append(f"device {device} but no GPU detected here: the GPU terms are counted on the host; "
                     "choose a target GPU (--gpu) to plan for one")
    dev = "gpu" if on_gpu else "host"
    shape = shapes.model_shape(cfg, spaces)
    params = shapes.FLOAT * shape.param_count
    grads = shapes.FLOAT * shape.trainable_count
    optim = shape.optimizer_bytes
    acts, pass_name = shapes.activation_bytes(cfg, spaces, shape)
    batch = shapes.batch_copy_bytes(cfg, spaces)
    n_params = shape.param_count
    terms = [
        Term("parameters", dev, params, f"{n_params:,} parameters in {', '.join(n.name for n in shape.networks)}"),
        Term("gradients", dev, grads, "trainable parameters only (target networks get none)"),
        Term("optimizer", dev, optim, ", ".join(f"{o.name}: {o.kind}" for o in shape.optimizers)),
        Term("activations", dev, acts, pass_name),
        Term("batch_copies", dev, batch, f"one sampled batch of {shapes.train_batch(cfg):,} on the device"),
    ]
    allocator_bytes = 0
    if on_gpu:
        assert gpu is not None
        held = params + grads + optim + acts + batch + gpu.workspace_bytes
        slack = max(alloc.min_bytes, int(alloc.slack_fraction * held))
        terms.insert(0, Term("cuda_context", "gpu", gpu.context_bytes + gpu.workspace_bytes,
                             f"{gpu.generation}: context {gpu.context_bytes // MIB} MiB + cuBLAS workspaces "
                             f"{gpu.workspace_bytes // MIB} MiB"))
        terms.append(Term("allocator_slack", "gpu", slack, f"{alloc.slack_fraction:.0%} of what torch's allocator holds"))
        allocator_bytes = held + slack
    full_at = _host_terms(cfg, spaces, on_gpu, terms, notes)
    gpu_bytes = sum(t.bytes for t in terms if t.where == "gpu")
    host_bytes = sum(t.bytes for t in terms if t.where == "host")
    host_verdict = verdict_for(host_bytes, host_capacity)
    if on_gpu:
        assert gpu is not None
        verdict, capacity, name = verdict_for(gpu_bytes, gpu.memory_bytes), gpu.memory_bytes, gpu.name
    else:
        verdict, capacity, name = host_verdict, host_capacity, None
        if device != "cpu" and gpu is None:
            notes.append("no GPU: the run trains on the CPU, so only host memory counts")
    return FitEstimate(verdict, capacity, gpu_bytes, host_bytes, terms, name, host_verdict, host_capacity, on_gpu,
                       n_params, allocator_bytes, full_at, None, notes)


def _host_terms(cfg: RunConfig, spaces: EnvSpaces, on_gpu: bool, terms: list[Term], notes: list[str]) -> int | None:
    rt = cfg.runtime
    full_at: int | None = None
    if cfg.is_baseline:
        pass
    elif cfg.algo in ("PPO", "A2C"):
        n_steps = cfg.params.n_steps
        terms.append(Term("rollout_buffer", "host", shapes.rollout_buffer_bytes(n_steps, rt.n_envs, spaces),
                          f"{n_steps:,} steps x {rt.n_envs} envs in host RAM (numpy), refilled every rollout"))
    else:
        p = cfg.params
        full = shapes.replay_buffer_bytes(p.buffer_size, rt.n_envs, spaces, p.optimize_memory_usage)
        full_at = shapes.replay_rows(p.buffer_size, rt.n_envs)
        terms.append(Term("replay_buffer", "host", full,
                          f"{full_at:,} transitions in host RAM (numpy){', obs stored once' if p.optimize_memory_usage else ''}"))
        total = cfg.budget.total_timesteps
        if full_at <= total:
            notes.append(f"the replay buffer is allocated lazily: host RAM grows with it until step {full_at:,} "
                         f"of {total:,}, when it reaches {full / MIB:,.0f} MiB")
        else:
            reached = full * total // full_at
            notes.append(f"the replay buffer fills at step {full_at:,}, beyond the budget of {total:,}: this run "
                         f"reaches about {reached / MIB:,.0f} MiB of its {full / MIB:,.0f} MiB (counted in full, "
                         "as resuming continues filling it)")
    if rt.normalize.obs or rt.normalize.reward:
        terms.append(Term("vecnormalize", "host", shapes.vecnormalize_bytes(rt.n_envs, spaces), "running statistics"))
    runtime = WORKER_RUNTIME_CPU + (WORKER_RUNTIME_CUDA_EXTRA if on_gpu else 0)
    terms.append(Term("worker_runtime", "host", runtime,
                      "python, torch" + (" with CUDA" if on_gpu else "") + " and stable-baselines3 in the worker"))
    if rt.vec_env == "subproc":
        from core.util.procs import effective_start_method

        method, _ = effective_start_method(rt.start_method, sys.platform)
        each = ENV_PROCESS_FORK if method == "fork" else ENV_PROCESS_SPAWN
        terms.append(Term("env_processes", "host", each * rt.n_envs,
                          f"{rt.n_envs} subprocess envs ({method}) of ~{each // MIB} MiB each"))
        if cfg.env.entry_point:
            notes.append("env_processes counts python and SB3 only: add what your own env allocates, per env")
    return full_at


def estimate_config(cfg: RunConfig, gpu_name: str | None = None, host_memory_bytes: int | None = None) -> FitEstimate:
    """Convenience for callers holding only a config: probe the env, resolve the GPU, estimate."""
    from core.config.spaces import probe_spaces
    from core.gpus import get_profile

    spaces = probe_spaces(cfg.env)
    gpu = get_profile(gpu_name or cfg.target_gpu)
    return estimate(cfg, spaces, gpu, host_memory_bytes)


__all__ = ["FITS", "FitEstimate", "NO_FIT", "Suggestion", "TIGHT", "Term", "estimate", "estimate_config", "verdict_for"]
