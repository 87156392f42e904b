"""The terms of the fit estimate: the memory a run needs, term by term, on the GPU and the host.

Pure arithmetic over the run config, the env's spaces (``core.config.spaces``) and a GPU profile
(``core.estimate.gpus``). The counts mirror SB3's own code (``core.estimate.families``); the tests compare
them with real SB3 objects.

GPU terms (the live tensors on the host instead when the run uses the CPU). Their sum is what
NVML lists for the run's process, the figure a card really loses:
  cuda_context      outside torch's allocator: the CUDA context, kernel images, library handles
                    (+ cuDNN's for a CNN or an LSTM; + every kernel with CUDA_MODULE_LOADING=EAGER)
  cublas_workspaces inside the allocator: cuBLAS/cuBLASLt workspaces (+ cuDNN's)
  parameters        every network held: actor, critic(s), target networks, log_std, ent_coef
  gradients         one float per trainable parameter (targets get none)
  optimizer         Adam 2x / RMSprop 1x the parameters it steps, plus step counters
  activations       the largest pass: training batch, n_envs inference or the optimizer step
  batch_copies      the sampled batch copied to the device
  allocator_cache   torch's caching allocator: blocks cached beside the live tensors, whole segments
                    (``AllocatorModel.reserved``); context and the allocator's constants per GPU
                    generation, measured (configs/gpus.yaml) or calibrated on the card (core.estimate.calibration)
  runs_correction   when the last runs on this card peaked above their estimates: the median excess
Host terms:
  rollout_buffer | replay_buffer, vecnormalize, worker_runtime, env_processes

stable-baselines3 keeps its buffers in host RAM as numpy arrays and copies one sampled batch
to the GPU per gradient step; the estimate says so instead of putting them on the GPU.
"""

from __future__ import annotations

import os
import sys

from core.config.algorithms.off_policy import OffPolicyParams
from core.config.algorithms.on_policy import RolloutParams
from core.config.schema import RunConfig, section_as
from core.config.spaces import EnvSpaces
from core.estimate import buffers, measured
from core.estimate.families.registry import family_of, train_batch
from core.estimate.gpus import AllocatorModel, GpuProfile, history_factor
from core.estimate.networks import FLOAT, ModelShape, Network, Optimizer
from core.estimate.result import MIB, FitEstimate, Term, verdict_for
from core.estimate.xla import pool_note, xla_gpu_terms
from core.util.procs import effective_start_method

# Host memory of the worker itself: python + numpy + gymnasium + torch + SB3, its own memory (PSS, what a
# run's summary reports) 329 MiB after a short CPU PPO run (CartPole, 1 env; 2-core Linux VM, torch 2.13.0+cpu,
# SB3 2.9.2, 2026-11-26); a CUDA build adds the CUDA runtime, cuBLAS and the host side of the context
# (approximate: no GPU on that machine to measure it).
WORKER_RUNTIME_CPU = 350 * MIB
WORKER_RUNTIME_CUDA_EXTRA = 1024 * MIB
# An SBX worker also holds jax, jaxlib (XLA), flax and optax beside torch (SBX's buffers): the process measuring an
# SBX model (core.worker.sbx_measure: the worker's imports, one env, the model built) peaked at 550-610 MiB max RSS
# against ~350 for the torch worker's own memory (PPO CartPole, SAC Pendulum, DQN; jax 0.10.2 CPU, 2-core Linux VM,
# 2026-11-29): the difference, rounded up. RSS counts shared library pages PSS splits: approximate.
WORKER_RUNTIME_JAX_EXTRA = 256 * MIB
# Own memory (USS) of one env process with a classic-control env, by vec env and start method, measured
# by bench/env_memory.py (8 CartPole envs, Linux, torch 2.x CPU, 2026-11): SB3's SubprocVecEnv
# (subproc-sb3) imports stable_baselines3 and so torch in each spawned or forkserver child to unpickle
# its worker function: 165 MiB. The lean one (subproc, core.envproc) holds python, numpy, gymnasium and
# the env: under forkserver they are preloaded once by the forkserver and shared (7.5 MiB each); under
# spawn (Windows) each child imports them and the worker's own module again (32 MiB). A forked child
# of either shares its parent's pages until it writes them (8 MiB after 2,000 steps; counted as 16).
# Against a run's own memory (PSS: the forkserver's pages split between it and its children), 32 lean
# forkserver envs of the heavy preset held 9.8 MiB each, with the forkserver (13 MiB) and multiprocessing's
# resource tracker (7 MiB) 10.4 MiB per env: counted as 10; 32 spawned ones held 33 MiB each (2-core Linux
# VM, torch 2.13.0+cpu, 2026-11-26).
ENV_PROCESS_BYTES = {
    ("subproc-sb3", "spawn"): 165 * MIB, ("subproc-sb3", "forkserver"): 165 * MIB, ("subproc-sb3", "fork"): 16 * MIB,
    ("subproc", "spawn"): 32 * MIB, ("subproc", "forkserver"): 10 * MIB, ("subproc", "fork"): 16 * MIB,
}

def compute(cfg: RunConfig, spaces: EnvSpaces, gpu: GpuProfile | None, host_capacity: int,
              alloc: AllocatorModel) -> FitEstimate:
    notes: list[str] = []
    if cfg.is_baseline:  # a fixed policy: no networks, nothing on the GPU
        return _baseline(cfg, spaces, host_capacity)
    device = cfg.runtime.device
    on_gpu = gpu is not None and device != "cpu"
    if gpu is None and device.startswith("cuda"):
        notes.append(f"device {device} but no GPU detected here: the GPU terms are counted on the host; "
                     "choose a target GPU (--gpu) to plan for one")
    dev = "gpu" if on_gpu else "host"
    family = family_of(cfg)
    shape, acts, pass_name, network = _networks(cfg, spaces, notes)
    params = FLOAT * shape.param_count
    grads = FLOAT * shape.trainable_count
    optim = shape.optimizer_bytes
    batch = family.batch_copy_bytes(cfg, spaces)
    n_params = shape.param_count
    held = f"{n_params:,} parameters in {', '.join(n.name for n in shape.networks)}"
    optim_note = ", ".join(f"{o.name}: {o.kind}" for o in shape.optimizers) or "none: the weights move by random search (ARS)"
    if network is not None and network.engine == "sbx":  # flax parameters, target copies, batch-norm statistics, optax
        n_params, grads, optim = network.params, FLOAT * network.trainable, network.optimizer_bytes
        params = grads + network.target_bytes + network.state_bytes
        held, optim_note = f"{n_params:,} parameters of the SBX model, {network.source}", f"optax state, {network.source}"
        pass_name = f"{pass_name} (SB3's count for the same networks: XLA's working memory is not measured)"
    terms = [
        Term("parameters", dev, params, held),
        Term("gradients", dev, grads, "trainable parameters only (target networks get none)"),
        Term("optimizer", dev, optim, optim_note),
        Term("activations", dev, acts, pass_name),
        Term("batch_copies", dev, batch, f"one sampled batch of {train_batch(cfg):,} on the device"
             if shape.optimizers else f"the observations of {cfg.runtime.n_envs} envs per step"),
    ]
    allocator_bytes = 0
    if on_gpu:
        assert gpu is not None
        allocator_bytes = _gpu_terms(cfg, shape, gpu, alloc, network, params + grads + optim + acts + batch,
                                     params + optim, terms, notes)
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
                       n_params, allocator_bytes, full_at, None, notes, network_source=network.source if network else "")


def _baseline(cfg: RunConfig, spaces: EnvSpaces, host_capacity: int) -> FitEstimate:
    """A fixed policy's estimate: no networks, nothing on the GPU."""
    terms: list[Term] = []
    _host_terms(cfg, spaces, False, terms, [])
    host_bytes = sum(t.bytes for t in terms)
    verdict = verdict_for(host_bytes, host_capacity)
    return FitEstimate(verdict, host_capacity, 0, host_bytes, terms, None, verdict, host_capacity, False,
                       0, 0, None, None, [f"the {cfg.algo} baseline holds no network: host memory only"])


def _networks(cfg: RunConfig, spaces: EnvSpaces,
              notes: list[str]) -> tuple[ModelShape, int, str, measured.MeasuredNetwork | None]:
    """The networks' shape, the activations of one training pass and its name, from the family's formulas or, for the
    user's own network, its measurement (an SBX model's arrays are counted by the caller); what is not measured yet
    is said in ``notes``."""
    family = family_of(cfg)
    shape = family.shape(cfg, spaces)
    acts, pass_name = family.activation_bytes(cfg, spaces, shape)
    network = measured.lookup(cfg) if measured.needs_measure(cfg) else None
    if network is not None and network.engine == "sbx":
        pass  # its arrays are counted by the caller; the working memory of one update is the formula's for the same networks
    elif network is not None:  # the user's own network: its counts are measured, not the formulas'
        shape = measured_shape(shape, network)
        if not network.error:
            batch_size = train_batch(cfg)
            acts = max(network.activations_for(batch_size), FLOAT * network.trainable)
            pass_name = f"training pass on {batch_size:,} samples, {measured.SOURCE}"
        else:
            notes.append(f"the training pass of your network could not run on the meta device ({network.error}): "
                         "the activations are those of SB3's default network")
    elif cfg.policy.code:
        notes.append("your own network is not measured yet: the parameters and activations are those of SB3's default "
                     "network (rlpanel estimate measures it)")
    elif cfg.runtime.engine == "sbx":
        notes.append("the SBX model is not measured yet: its arrays are counted as SB3's torch networks "
                     "(rlpanel estimate measures it)")
    return shape, acts, pass_name, network


def _gpu_terms(cfg: RunConfig, shape: ModelShape, gpu: GpuProfile, alloc: AllocatorModel,
               network: measured.MeasuredNetwork | None, live: int, weights: int, terms: list[Term],
               notes: list[str]) -> int:
    """The GPU's fixed terms (torch's allocator, or XLA's for an SBX run) and the correction from the last runs on the
    card, added to ``terms``; torch's allocator bytes (0 for XLA)."""
    allocator_bytes = 0
    if cfg.runtime.engine == "sbx":  # XLA's allocator, not torch's: no cuBLAS workspaces nor caching segments of torch's
        measured_in_use = network.in_use_bytes if network is not None and network.engine == "sbx" else None
        xla_gpu_terms(gpu, live, measured_in_use, weights, terms)
        notes.append(pool_note())
    else:
        allocator_bytes = _gpu_fixed_terms(cfg, shape, gpu, alloc, live, terms)
    factor = history_factor(gpu)
    if factor is not None:
        so_far = sum(t.bytes for t in terms if t.where == "gpu")
        terms.append(Term("runs_correction", "gpu", int((factor - 1) * so_far),
                          f"the last runs on this card peaked at x{factor:.2f} of their estimates (median)"))
    return allocator_bytes


def measured_shape(formula: ModelShape, network: measured.MeasuredNetwork) -> ModelShape:
    """The model as measured: the trained networks, the target copies (no gradients, never stepped), one optimizer
    of the algorithm's kind over everything trained."""
    nets = [Network("your network (measured)", network.trainable, network.tensors, True)]
    if network.params > network.trainable:
        nets.append(Network("target networks", network.params - network.trainable, 0, False))
    kind = formula.optimizers[0].kind if formula.optimizers else "adam"
    return ModelShape(tuple(nets), (Optimizer("policy", kind, network.trainable, network.tensors),), formula.cnn)


def _gpu_fixed_terms(cfg: RunConfig, shape: ModelShape, gpu: GpuProfile, alloc: AllocatorModel, live: int,
                     terms: list[Term]) -> int:
    """The context outside the allocator, its workspaces and its cache; returns what it reserves."""
    cudnn = shape.cnn is not None or family_of(cfg).cudnn
    eager = os.environ.get("CUDA_MODULE_LOADING", "").upper() == "EAGER"
    outside = gpu.context_bytes + (gpu.cudnn_bytes if cudnn else 0) + (gpu.eager_bytes if eager else 0)
    workspaces = gpu.workspace_bytes + (gpu.cudnn_workspace_bytes if cudnn else 0)
    reserved = alloc.reserved(live, workspaces)
    where = gpu.source or gpu.generation
    terms.insert(0, Term("cuda_context", "gpu", outside, f"outside torch's allocator: context and kernels ({where})"
                         + (", cuDNN" if cudnn else "") + (", every kernel loaded: CUDA_MODULE_LOADING=EAGER" if eager else "")))
    terms.insert(1, Term("cublas_workspaces", "gpu", workspaces, "cuBLAS/cuBLASLt" + (" and cuDNN" if cudnn else "")
                         + " workspaces in torch's allocator"))
    terms.append(Term("allocator_cache", "gpu", reserved - workspaces - live,
                      f"torch's caching allocator: freed blocks kept for reuse, whole {alloc.segment_bytes // MIB} MiB "
                      f"segments (x{alloc.cache_factor:g} of the live tensors, measured)"))
    return reserved


def _host_terms(cfg: RunConfig, spaces: EnvSpaces, on_gpu: bool, terms: list[Term], notes: list[str]) -> int | None:
    rt = cfg.runtime
    full_at: int | None = None
    if cfg.is_baseline:
        pass
    elif cfg.spec is not None and not family_of(cfg).has_buffer:
        pass  # ARS plays each perturbation's episodes and keeps only their returns: no buffer
    elif cfg.spec is not None and cfg.spec.on_policy:
        n_steps = section_as(cfg, RolloutParams).n_steps
        extra, what = family_of(cfg).rollout_extra_bytes(cfg, spaces)
        terms.append(Term("rollout_buffer", "host", buffers.rollout_buffer_bytes(n_steps, rt.n_envs, spaces) + extra,
                          f"{n_steps:,} steps x {rt.n_envs} envs in host RAM (numpy){what}, refilled every rollout"))
    else:
        p = section_as(cfg, OffPolicyParams)
        full = buffers.replay_buffer_bytes(p.buffer_size, rt.n_envs, spaces, p.optimize_memory_usage)
        full_at = buffers.replay_rows(p.buffer_size, rt.n_envs)
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
        terms.append(Term("vecnormalize", "host", buffers.vecnormalize_bytes(rt.n_envs, spaces), "running statistics"))
    sbx = rt.engine == "sbx" and not cfg.is_baseline
    runtime = WORKER_RUNTIME_CPU + (WORKER_RUNTIME_CUDA_EXTRA if on_gpu else 0) + (WORKER_RUNTIME_JAX_EXTRA if sbx else 0)
    terms.append(Term("worker_runtime", "host", runtime,
                      ("python, jax" + (" with CUDA" if on_gpu else "") + ", SBX and torch (its buffers) in the worker")
                      if sbx else "python, torch" + (" with CUDA" if on_gpu else "") + " and stable-baselines3 in the worker"))
    if rt.vec_env != "dummy":
        method, _ = effective_start_method(rt.start_method, sys.platform)
        each = ENV_PROCESS_BYTES[(rt.vec_env, method)]
        holds = "python, torch and SB3" if rt.vec_env == "subproc-sb3" else "python, numpy and gymnasium"
        terms.append(Term("env_processes", "host", each * rt.n_envs,
                          f"{rt.n_envs} {rt.vec_env} env processes ({method}) of ~{each // MIB} MiB each"))
        if cfg.env.entry_point:
            notes.append(f"env_processes counts {holds} only: add what your own env allocates, per env")
    return full_at
