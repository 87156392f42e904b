"""Estimated GPU memory against what a run really takes, per built-in preset; and estimate() timing.

    python bench/vram_check.py [--steps N] [--timing-only] [--json-out FILE] [--extra] [--jobs N] [--segments]

Where CUDA is present, each built-in preset (and each algorithm it covers; SAC on Pendulum-v1,
the others on CartPole-v1; ``--extra`` adds each algorithm's defaults) trains briefly on ``cuda``
with in-process envs, each case in a fresh child process, and the script prints two ratios
(goal for both: 0.85-1.15):

  alloc   the estimate's allocator bytes (its GPU total less what lives outside torch's caching
          allocator) against ``torch.cuda.max_memory_reserved()``
  nvml    the estimate's GPU total against the process's peak in NVML's process list, sampled
          every 20 ms: what the user's card really loses

The estimate is made for this machine's card (NVML), through the calibration stored for it when
there is one (``rlpanel calibrate``), else the table's constants; ``--table`` ignores a calibration.
``--json-out`` writes every row with torch's allocator statistics (and, with ``--segments``, each
allocator segment and the code that made it; slow), for ``../shared/measurements``. ``--jobs N``
runs N cases at once: each child's figures are its own process's, so they do not mix. Without
CUDA it says so and exits 0. The timing part (median microseconds per ``estimate()`` call) runs
everywhere.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.config.presets import list_presets, resolve  # noqa: E402
from core.config.spaces import probe_spaces  # noqa: E402
from core.config.trust import code_modules  # noqa: E402
from core.estimate.estimate import estimate  # noqa: E402
from core.estimate.gpus import get_profile  # noqa: E402

MIB = 1 << 20
EXTRA = [("defaults", "PPO", "CartPole-v1"), ("defaults", "A2C", "CartPole-v1"), ("defaults", "SAC", "Pendulum-v1"),
         ("defaults", "TD3", "Pendulum-v1"), ("defaults", "DDPG", "Pendulum-v1"), ("defaults", "DQN", "CartPole-v1")]


def cases(extra: bool = False) -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for preset in list_presets():
        if preset.builtin and not code_modules(preset.data):  # an own network is measured, not a case of the formulas
            for algo in preset.algos:
                env = "Pendulum-v1" if algo == "SAC" else "CartPole-v1"
                out.append((preset.name, algo, {"algo": algo, "env": {"id": env}}))
    if extra:
        out += [(name, algo, {"algo": algo, "env": {"id": env}}) for name, algo, env in EXTRA]
    return out


def case_config(name: str, algo: str, overrides: dict[str, Any], steps: int) -> Any:
    raw = {**overrides, "runtime": {"device": "cuda"}}
    preset = None if name == "defaults" else name
    cfg = resolve(preset, raw).config
    if cfg.spec is not None and not cfg.spec.on_policy:  # let it train within the short budget
        cfg = resolve(preset, {**raw, algo.lower(): {"learning_starts": min(100, steps // 4)}}).config
    return cfg


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


class _NvmlPeak:
    """This process's peak in NVML's process list, sampled every 20 ms in a thread."""

    def __init__(self) -> None:
        import pynvml

        pynvml.nvmlInit()
        self.nvml, self.peak, self._stop = pynvml, 0, threading.Event()
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def read(self) -> int:
        total = 0
        for handle in self.handles:
            for p in self.nvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if p.pid == os.getpid() and p.usedGpuMemory:
                    total += p.usedGpuMemory
        return total

    def _loop(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self.read())

    def __enter__(self) -> _NvmlPeak:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join()
        self.peak = max(self.peak, self.read())


def segments(torch: Any) -> list[dict[str, Any]]:
    """Each segment torch's allocator holds: size, pool, bytes in use, and the frame that made its largest block."""
    out = []
    for seg in torch.cuda.memory_snapshot():
        blocks = seg.get("blocks", [])
        largest = max(blocks, key=lambda b: b.get("size", 0), default={})
        frames = largest.get("frames") or []
        where = next((f"{f.get('filename', '?').split('site-packages/')[-1]}:{f.get('line')} {f.get('name')}"
                      for f in frames if "torch/" not in str(f.get("filename", ""))), None)
        out.append({"size": seg["total_size"], "pool": seg.get("segment_type"), "allocated": seg.get("allocated_size"),
                    "blocks": len(blocks), "largest_block": largest.get("size"), "where": where})
    return out


def child(name: str, algo: str, steps: int, with_segments: bool = False) -> int:
    """One case in this fresh process: train on cuda, print one JSON line of what it took."""
    import torch

    from core.worker.factory import build_model, build_vec_env

    overrides = next(o for n, a, o in cases(True) if n == name and a == algo)
    cfg = case_config(name, algo, overrides, steps)
    if with_segments:
        torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python", max_entries=100_000)
    with _NvmlPeak() as nvml:
        env, _ = build_vec_env(cfg, force_dummy=True)
        model = build_model(cfg, env, device="cuda")
        on_policy = cfg.spec is not None and cfg.spec.on_policy
        budget = max(steps, cfg.runtime.n_envs * cfg.params.n_steps) if on_policy else steps
        model.learn(budget)
        torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    row = {"preset": name, "algo": algo, "steps": budget, "nvml_process_peak": nvml.peak,
           "max_reserved": torch.cuda.max_memory_reserved(), "max_allocated": torch.cuda.max_memory_allocated(),
           "large_pool_peak": stats.get("reserved_bytes.large_pool.peak"),
           "small_pool_peak": stats.get("reserved_bytes.small_pool.peak"),
           "segments": segments(torch) if with_segments else None, "torch": torch.__version__, "cuda": torch.version.cuda,
           "device_name": torch.cuda.get_device_name(0)}
    print("VRAMROW " + json.dumps(row), flush=True)
    env.close()
    return 0


def vram(steps: int, extra: bool, json_out: str | None, table_only: bool, jobs: int = 1,
         with_segments: bool = False) -> int:
    try:
        import torch
    except ImportError:
        print("torch is not installed: no VRAM check")
        return 0
    if not torch.cuda.is_available():
        print("no CUDA device here: the VRAM check needs an NVIDIA GPU; skipped")
        return 0
    gpu = get_profile("auto")
    if gpu is None:
        print("CUDA without NVML: no card to estimate for; skipped")
        return 0
    if table_only:
        from core.estimate.gpus import without_calibration

        gpu = without_calibration(gpu)
    print(f"VRAM check on {gpu.name} ({gpu.source}), {steps} steps per case, torch {torch.__version__}")
    print(f"{'preset':<14} {'algo':<4} {'est alloc':>9} {'reserved':>9} {'alloc':>6} {'est total':>9} "
          f"{'NVML peak':>9} {'nvml':>6}   (MiB)")
    rows = []
    todo = cases(extra)
    flags = ["--segments"] if with_segments else []
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        runs = [pool.submit(subprocess.run, [sys.executable, __file__, "--child", name, algo, "--steps", str(steps), *flags],
                            capture_output=True, text=True, timeout=600) for name, algo, _ in todo]
        for (name, algo, overrides), future in zip(todo, runs, strict=True):
            cfg = case_config(name, algo, overrides, steps)
            result = estimate(cfg, probe_spaces(cfg.env), gpu)
            out = future.result()
            line = next((ln for ln in out.stdout.splitlines() if ln.startswith("VRAMROW ")), None)
            if line is None:
                print(f"{name:<14} {algo:<4} failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
                continue
            row = json.loads(line[len("VRAMROW "):])
            row.update(estimate_allocator=result.allocator_bytes, estimate_gpu=result.gpu_bytes, estimate_source=gpu.source,
                       estimate_terms={t.name: t.bytes for t in result.terms if t.where == "gpu"})
            rows.append(row)
            alloc, total = result.allocator_bytes, result.gpu_bytes
            print(f"{name:<14} {algo:<4} {alloc / MIB:>9.1f} {row['max_reserved'] / MIB:>9.1f} "
                  f"{alloc / max(row['max_reserved'], 1):>6.2f} {total / MIB:>9.1f} {row['nvml_process_peak'] / MIB:>9.1f} "
                  f"{total / max(row['nvml_process_peak'], 1):>6.2f}", flush=True)
    if json_out:
        Path(json_out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="env steps per case (at least one rollout)")
    parser.add_argument("--timing-only", action="store_true", help="only time estimate()")
    parser.add_argument("--extra", action="store_true", help="add each algorithm's defaults to the presets")
    parser.add_argument("--table", action="store_true", help="estimate from configs/gpus.yaml, not a calibration")
    parser.add_argument("--json-out", help="write every measured row to this file")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    parser.add_argument("--segments", action="store_true", help="record each allocator segment and its maker (slow)")
    parser.add_argument("--child", nargs=2, metavar=("PRESET", "ALGO"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], args.steps, args.segments)
    timing()
    if args.timing_only:
        return 0
    print()
    return vram(args.steps, args.extra, args.json_out, args.table, args.jobs, args.segments)


if __name__ == "__main__":
    sys.exit(main())
