"""The change that makes a run fit: one setting, found by re-estimating candidate values.

The biggest term on the side that does not fit picks the knobs to try (a smaller batch for
activations, a smaller net for parameters and optimizer state, a smaller replay buffer, fewer
envs...). Each knob's candidates are valid values by construction (PPO's batch_size stays a
divisor of the rollout) and memory shrinks with them, so a bisection finds the largest value
that fits in a few re-estimates. The returned ``Suggestion`` has been re-estimated: applying
it gives ``fits`` on the side that failed without making the other side worse.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from core.config.algorithms.off_policy import OffPolicyParams
from core.config.algorithms.on_policy import MinibatchParams, RolloutParams
from core.config.dotted import get_path, set_path
from core.config.errors import ConfigError
from core.config.schema import RunConfig, resolved_net_arch, section_as
from core.config.spaces import EnvSpaces
from core.config.validate import validate_config
from core.estimate.compute import compute
from core.estimate.families.registry import family_of
from core.estimate.gpus import GpuProfile, allocator_model
from core.estimate.result import FITS, MIB, NO_FIT, TIGHT, FitEstimate, Suggestion

_RANK = {FITS: 0, TIGHT: 1, NO_FIT: 2}
Knob = tuple[str, list[Any]]  # (--set path, candidate values, largest first)


def suggest_fix(cfg: RunConfig, spaces: EnvSpaces, gpu: GpuProfile | None, host_capacity: int,
                result: FitEstimate) -> Suggestion | None:
    side = result.main_side  # the side that does not fit; the fuller one first
    big = result.biggest(side)
    raw = cfg.model_dump(mode="json")
    alloc = allocator_model()

    def verdicts(est: FitEstimate) -> tuple[str, str]:
        return (est.verdict if est.on_gpu else FITS), est.host_verdict

    before = verdicts(result)

    def ok(est: FitEstimate) -> bool:
        gpu_v, host_v = verdicts(est)
        mine, other = (gpu_v, host_v) if side == "gpu" else (host_v, gpu_v)
        other_before = before[1] if side == "gpu" else before[0]
        return mine == FITS and _RANK[other] <= _RANK[other_before]

    for path, candidates in _knobs(cfg, big.name, side, result):
        def attempt(value: Any, path: str = path) -> FitEstimate | None:
            return _try(raw, path, value, spaces, gpu, host_capacity, alloc, ok)

        trial = _bisect(candidates, attempt)
        if trial is not None:
            value, est = trial
            return Suggestion(path, get_path(raw, path), value, _text(cfg, big, path, get_path(raw, path), value, est, side))
    return None


def _try(raw: dict[str, Any], path: str, value: Any, spaces: EnvSpaces, gpu: GpuProfile | None, host_capacity: int,
         alloc: Any, ok: Callable[[FitEstimate], bool]) -> FitEstimate | None:
    try:
        trial = validate_config(set_path(raw, path, value)).config
    except ConfigError:
        return None
    est = compute(trial, spaces, gpu if trial.runtime.device != "cpu" else None, host_capacity, alloc)
    return est if ok(est) else None


def _bisect(candidates: list[Any], attempt: Callable[[Any], FitEstimate | None]) -> tuple[Any, FitEstimate] | None:
    """The first (largest) candidate that fits, assuming every later one fits too."""
    lo, hi, found = 0, len(candidates) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        est = attempt(candidates[mid])
        if est is not None:
            found, hi = (candidates[mid], est), mid - 1
        else:
            lo = mid + 1
    return found


# --- which knobs, which values -------------------------------------------------------------------

def _knobs(cfg: RunConfig, term: str, side: str, result: FitEstimate) -> Iterator[Knob]:
    spec = cfg.spec
    assert spec is not None, "a baseline needs no fix: it holds no network"
    section = spec.section
    batch = list(_batch_knobs(cfg))
    net = [("policy.net_arch", _smaller_nets(cfg))]
    envs = [("runtime.n_envs", _fewer_envs(cfg))]
    if side == "gpu":
        if term in ("cuda_context", "cublas_workspaces"):
            order = []
        elif term in ("activations", "batch_copies"):
            activations = result.term("activations")
            infer = activations is not None and "inference" in activations.note
            order = envs + batch + net if infer else batch + net
        else:
            order = net + batch
        yield from order
        yield "runtime.device", ["cpu"]
        return
    if term == "replay_buffer":
        yield f"{section}.buffer_size", _smaller_buffers(cfg)
        if not section_as(cfg, OffPolicyParams).optimize_memory_usage:
            yield f"{section}.optimize_memory_usage", [True]
    elif term == "rollout_buffer":
        yield f"{section}.n_steps", _fewer_steps(cfg)
        yield from envs
    elif term == "env_processes":
        yield from envs
        yield "runtime.vec_env", ["subproc", "dummy"] if cfg.runtime.vec_env == "subproc-sb3" else ["dummy"]
    elif term in ("activations", "batch_copies"):
        yield from batch + net
    elif term in ("parameters", "gradients", "optimizer"):
        yield from net + batch
    if not spec.on_policy and term != "replay_buffer":
        yield f"{section}.buffer_size", _smaller_buffers(cfg)


def _batch_knobs(cfg: RunConfig) -> Iterator[Knob]:
    spec, p = cfg.spec, cfg.params
    assert spec is not None
    knob = family_of(cfg).update_knob(cfg)
    if knob is not None:  # ARS: fewer perturbations per update
        yield f"{spec.section}.{knob[0]}", _halvings(knob[1])
    elif isinstance(p, MinibatchParams) and spec.batch_divides_rollout:  # PPO: a smaller minibatch dividing the rollout
        rollout = cfg.runtime.n_envs * p.n_steps
        yield f"{spec.section}.batch_size", [d for d in _divisors(rollout) if 2 <= d < int(p.batch_size)]
    elif isinstance(p, RolloutParams):  # A2C: the whole rollout is the batch (TRPO, RecurrentPPO: n_steps too)
        yield f"{spec.section}.n_steps", _halvings(p.n_steps)
        yield "runtime.n_envs", _fewer_envs(cfg)
    elif isinstance(p, OffPolicyParams):
        yield f"{spec.section}.batch_size", _halvings(int(p.batch_size))


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]), reverse=True)


def _halvings(current: int, floor: int = 1) -> list[int]:
    """Round values below ``current``, largest first: powers of two and current/k."""
    values = {current // k for k in (2, 3, 4, 8, 16, 32, 64, 128)} | {1 << i for i in range(max(current.bit_length(), 1))}
    return sorted((v for v in values if floor <= v < current), reverse=True)


def _fewer_envs(cfg: RunConfig) -> list[int]:
    current = cfg.runtime.n_envs
    out = []
    for n in range(current - 1, 0, -1):
        p = cfg.params if cfg.spec is not None and cfg.spec.batch_divides_rollout else None
        if isinstance(p, MinibatchParams):
            rollout = n * p.n_steps
            if rollout < max(2, int(p.batch_size)) or rollout % int(p.batch_size):
                continue
        out.append(n)
    return out


def _fewer_steps(cfg: RunConfig) -> list[int]:
    p = section_as(cfg, RolloutParams)
    steps = p.n_steps
    if cfg.spec is None or not cfg.spec.batch_divides_rollout or not isinstance(p, MinibatchParams):
        return _halvings(steps)
    batch, n_envs = int(p.batch_size), cfg.runtime.n_envs
    unit = batch // math.gcd(batch, n_envs)  # n_steps must be a multiple of this
    return [s for s in range(steps - steps % unit, 0, -unit) if s < steps][:200]


_NICE = (1, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5, 8)


def _smaller_buffers(cfg: RunConfig) -> list[int]:
    p = section_as(cfg, OffPolicyParams)
    current, floor = p.buffer_size, max(p.batch_size, 1)
    values = {int(m * 10 ** e) for e in range(0, 10) for m in _NICE}
    return sorted((v for v in values if floor <= v < current), reverse=True)


def _smaller_nets(cfg: RunConfig) -> list[Any]:
    arch = cfg.policy.net_arch
    if arch is None:
        arch = next(iter(resolved_net_arch(cfg).values()))
    out: list[Any] = []
    for k in (2, 4, 8, 16, 32, 64):
        new = {key: [max(1, s // k) for s in v] for key, v in arch.items()} if isinstance(arch, dict) \
            else [max(1, s // k) for s in arch]
        if not out or new != out[-1]:
            out.append(new)
    return out


def _text(cfg: RunConfig, big: Any, path: str, old: Any, new: Any, est: FitEstimate, side: str) -> str:
    label = path.rsplit(".", 1)[-1]
    if label == "net_arch" and old is None:
        old = next(iter(resolved_net_arch(cfg).values()))
    show = (lambda v: f"{v:,}") if isinstance(new, int) and not isinstance(new, bool) else str
    where = est.gpu_name or "the GPU" if side == "gpu" else "host RAM"
    used, cap = (est.gpu_bytes, est.capacity_bytes) if side == "gpu" and est.on_gpu else (est.host_bytes, est.host_capacity_bytes)
    if path == "runtime.device":
        return (f"{big.name} ({big.bytes / MIB:,.0f} MiB) leaves no room on this GPU: train on the CPU "
                f"(device {old} -> cpu), using {used / cap:.0%} of host RAM")
    return (f"{big.name} is the biggest term ({big.bytes / MIB:,.0f} MiB): {label} {show(old)} -> {show(new)} "
            f"brings {where} to {used / MIB:,.0f} MiB, {used / cap:.0%} of {cap / (1 << 30):.1f} GiB")
