"""XLA's GPU memory for an SBX (JAX) run: how much of the card its allocator takes, and the terms the estimate adds.

By default XLA takes 75 % of a GPU's memory when jax starts, whatever the run needs. The worker turns that off
(``set_jax_env``: ``XLA_PYTHON_CLIENT_PREALLOCATE=false``): XLA then grows its pool as the run allocates, so the
estimate and the run's peak mean the same thing. A user who set ``XLA_PYTHON_CLIENT_PREALLOCATE=true`` or a pool
size (``XLA_PYTHON_CLIENT_MEM_FRACTION``) in the environment keeps it, and the estimate counts that share of the
card (``preallocated_fraction``): one rule, read by both. JAX's documented defaults: 0.75, preallocation on.

SBX compiles its policy and updates in a run's first cycle (seconds; at 20k PPO steps on 2 cores about as long as the
rest of the run). ``set_jax_env`` also gives jax a persistent compilation cache in the user folder
(``JAX_COMPILATION_CACHE_DIR``, every program kept, at most ``COMPILE_CACHE_BYTES``): the next run, seed, trial, tune
probe or resume of the same shapes loads what the last compiled (measured here: 4,096 PPO CartPole steps learned in
1.3 s instead of 5.2 s on the second run).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

from core.estimate.gpus import GpuProfile
from core.estimate.result import MIB, Term
from core.util.paths import user_home

PREALLOCATE = "XLA_PYTHON_CLIENT_PREALLOCATE"
MEM_FRACTION = "XLA_PYTHON_CLIENT_MEM_FRACTION"
XLA_DEFAULT_FRACTION = 0.75
COMPILE_CACHE = "JAX_COMPILATION_CACHE_DIR"
COMPILE_CACHE_BYTES = 512 * MIB  # jax evicts the least recently used programs past it (a small MLP's are ~100 KiB each)
GROWS_TEXT = "XLA grows its pool as needed (XLA_PYTHON_CLIENT_PREALLOCATE=false, set by the worker)"


def preallocated_fraction(environ: Mapping[str, str] | None = None) -> float | None:
    """The share of the card XLA takes at its start in a worker launched with ``environ`` (None: none, it grows as
    needed). ``PREALLOCATE=true``: the user's fraction, else 0.75; a fraction set without ``PREALLOCATE``: that
    fraction (a pool size the user asked for); an unreadable fraction: JAX's 0.75."""
    env = os.environ if environ is None else environ
    asked = env.get(PREALLOCATE, "").strip().lower()
    if asked in ("false", "0", "no") or (not asked and MEM_FRACTION not in env):
        return None
    try:
        fraction = float(env.get(MEM_FRACTION, XLA_DEFAULT_FRACTION))
    except ValueError:
        return XLA_DEFAULT_FRACTION
    return fraction if 0 < fraction <= 1 else XLA_DEFAULT_FRACTION


def set_jax_env(device: str, platform: str, environ: MutableMapping[str, str] | None = None) -> None:
    """JAX's settings for an SBX run (the worker, and the estimate's measurement of the model), set before jax is
    imported (it reads them once). No preallocation unless the user asked for a pool (``preallocated_fraction``). A run
    on the CPU (asked, or on Windows, where JAX has no CUDA) loads no GPU backend at all. The compilation cache in the
    user folder. A value the user set stays."""
    env = os.environ if environ is None else environ
    if MEM_FRACTION not in env:
        env.setdefault(PREALLOCATE, "false")
    if device == "cpu" or platform == "win32":
        env.setdefault("JAX_PLATFORMS", "cpu")
    if COMPILE_CACHE not in env:  # compiled programs kept across runs (a folder the user named stays theirs)
        env[COMPILE_CACHE] = str(user_home() / "cache" / "jax-compiled")
        env.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")  # SBX's programs compile in under 1 s each
        env.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(COMPILE_CACHE_BYTES))


def xla_gpu_terms(gpu: GpuProfile, live: int, measured_in_use: int | None, counted: int, terms: list[Term],
                  environ: Mapping[str, str] | None = None) -> None:
    """The GPU terms of an SBX run beside its arrays (``live``): the CUDA context, what XLA held after the model was
    built beyond the arrays counted (``measured_in_use`` on the card, when measured there), and a preallocated pool."""
    where = gpu.source or gpu.generation
    terms.insert(0, Term("cuda_context", "gpu", gpu.context_bytes,
                         f"the CUDA context and kernels: the card's as torch measured it ({where}); JAX's own not measured"))
    extra = max(0, (measured_in_use or 0) - counted)
    if extra:
        terms.append(Term("xla_buffers", "gpu", extra, "what XLA held after building the SBX model beyond the arrays "
                                                      "counted (measured from the SBX model)"))
    fraction = preallocated_fraction(environ)
    if fraction is not None:
        pool = int(fraction * gpu.memory_bytes)
        held = live + extra
        terms.append(Term("xla_preallocated", "gpu", max(0, pool - held),
                          f"XLA takes {fraction:.0%} of the card at its start ({pool / MIB:,.0f} MiB: {PREALLOCATE} or "
                          f"{MEM_FRACTION} set in the environment); unset them to let it grow as needed"))


def pool_note(environ: Mapping[str, str] | None = None) -> str:
    """What the fit text says of XLA's pool on a GPU."""
    fraction = preallocated_fraction(environ)
    if fraction is None:
        return GROWS_TEXT
    return f"XLA preallocates {fraction:.0%} of the card ({PREALLOCATE} / {MEM_FRACTION} in the environment)"
