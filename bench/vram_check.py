"""Estimated GPU memory against what torch really reserves, per built-in preset; and estimate() timing.

    python bench/vram_check.py [--steps N] [--timing-only]

Where CUDA is present, each built-in preset (and each algorithm it covers; SAC on Pendulum-v1,
the others on CartPole-v1) trains briefly on ``cuda`` with in-process envs, and the script prints
the estimate's allocator bytes (its GPU total minus the CUDA context, which lives outside torch's
caching allocator), ``torch.cuda.max_memory_reserved()`` and their ratio (goal: 0.85-1.15).
Without CUDA it says so and exits 0. The timing part (median microseconds per ``estimate()``
call) runs everywhere.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.config.presets import list_presets, resolve  # noqa: E402
from core.config.spaces import probe_spaces  # noqa: E402
from core.fit.estimate import estimate  # noqa: E402
from core.fit.gpus import get_profile  # noqa: E402

MIB = 1 << 20


def cases():
    for preset in list_presets():
        if preset.builtin:
            for algo in preset.algos:
                env = "Pendulum-v1" if algo == "SAC" else "CartPole-v1"
                yield preset.name, algo, {"algo": algo, "env": {"id": env}}


def timing(calls: int = 200) -> None:
    gpu = get_profile("RTX 4060 Laptop")
    print(f"estimate() timing, {calls} calls each (target GPU {gpu.name}):")
    for name, algo, overrides in cases():
        cfg = resolve(name, overrides).config
        spaces = probe_spaces(cfg.env)
        estimate(cfg, spaces, gpu)
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            estimate(cfg, spaces, gpu)
            times.append(time.perf_counter() - t)
        print(f"  {name:<15} {algo:<4} median {statistics.median(times) * 1e6:8.1f} us per call")


def vram(steps: int) -> int:
    try:
        import torch
    except ImportError:
        print("torch is not installed: no VRAM check")
        return 0
    if not torch.cuda.is_available():
        print("no CUDA device here: the VRAM check needs an NVIDIA GPU; skipped")
        return 0
    from core.training.factory import build_model, build_vec_env

    gpu = get_profile("auto")
    if gpu is None:  # CUDA without NVML: describe the card from torch
        from core.fit.gpus import GpuProfile, _constants, _load_table, generation_for

        props = torch.cuda.get_device_properties(0)
        cc = f"{props.major}.{props.minor}"
        context, workspace = _constants(generation_for(cc), _load_table().generations, {})
        gpu = GpuProfile(props.name, props.total_memory, cc, props.major >= 8, generation_for(cc), context, workspace)
    print(f"VRAM check on {gpu.name}, {steps} steps per run")
    print(f"{'preset':<15} {'algo':<4} {'estimated MiB':>14} {'reserved MiB':>13} {'ratio':>6}")
    for name, algo, overrides in cases():
        raw = {**overrides, "runtime": {"device": "cuda"}}
        cfg = resolve(name, raw).config
        if algo in ("SAC", "DQN"):  # let it train within the short budget
            cfg = resolve(name, {**raw, algo.lower(): {"learning_starts": min(100, steps // 4)}}).config
        result = estimate(cfg, probe_spaces(cfg.env), gpu)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        env, _ = build_vec_env(cfg, force_dummy=True)
        model = build_model(cfg, env, device="cuda")
        budget = max(steps, cfg.runtime.n_envs * getattr(cfg.params, "n_steps", 1))
        model.learn(budget)
        reserved = torch.cuda.max_memory_reserved()
        env.close()
        del model
        estimated = result.allocator_bytes
        print(f"{name:<15} {algo:<4} {estimated / MIB:>14.1f} {reserved / MIB:>13.1f} {estimated / max(reserved, 1):>6.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="env steps per preset (at least one rollout)")
    parser.add_argument("--timing-only", action="store_true", help="only time estimate()")
    args = parser.parse_args()
    timing()
    if args.timing_only:
        return 0
    print()
    return vram(args.steps)


if __name__ == "__main__":
    sys.exit(main())
