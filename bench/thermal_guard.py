"""What the GPU guard costs a run that never gets hot: steps/s with and without it, side by side.

One process trains one PPO model (CartPole-v1, 8 DummyVecEnv envs, n_steps 256, one torch thread)
in blocks of ``--block`` steps, alternating blocks with and without the guard (the order flips
every pair), each block through the worker's own ``RunRecorder`` callback writing records:

- without: the recorder alone (as a run on a machine without NVML);
- with: a fresh ``GpuGuard`` thread reading the GPU through NVML once a second, and the
  recorder handing it its turn once a second (``GuardHandler``), exactly as the worker does.

Interleaving blocks of one model in one process cancels what a loaded machine adds to separate
runs (the CPU the other processes take changes by tens of per cent from minute to minute). Prints
each pair and the median ratio with/without (goal >= 0.99), and the CPU time of the guard's
thread against the guarded blocks' wall time (a figure a loaded machine does not blur). Without an NVIDIA driver the bench
re-runs itself over the test suite's fake NVML (Linux, a C compiler), at 60 C under a 93 C
slowdown threshold, so the guard does its reads and never pauses.

    python bench/thermal_guard.py [--pairs 9] [--block 4096]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def over_fake_nvml() -> int:
    """Run this bench again with the fake NVML on the library path; returns its exit code."""
    from tests.fakenvml import FakeNvml, compile_fake_nvml

    with tempfile.TemporaryDirectory() as tmp:
        fake = FakeNvml(compile_fake_nvml(Path(tmp) / "lib"), Path(tmp) / "nvml.cfg")
        fake.configure(count=1, temperature=60, temperature_slowdown=93)
        return subprocess.call([sys.executable, *sys.argv], env=fake.env(), cwd=REPO)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--block", type=int, default=4096, help="steps per block (a multiple of 2048)")
    args = parser.parse_args()
    from core.telemetry.nvml import nvml_status

    if not nvml_status().available:
        if os.environ.get("FAKE_NVML_CONFIG"):
            sys.exit(f"NVML is not available even over the fake: {nvml_status().reason}")
        print(f"no NVML here ({nvml_status().reason}): measuring over the test suite's fake NVML", flush=True)
        sys.exit(over_fake_nvml())

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    from core.telemetry.guard import GpuGuard, thermal_limits
    from core.telemetry.nvml import slowdown_threshold
    from core.util.jsonl import JsonlWriter
    from core.worker.callbacks import RunRecorder, StopFlag
    from core.worker.guarding import GuardHandler

    torch.set_num_threads(1)
    limits = thermal_limits(True, None, None, slowdown_threshold(0), 0)
    print(f"driver {nvml_status().driver_version}; {limits.note}", flush=True)
    env = make_vec_env("CartPole-v1", n_envs=8, seed=1)
    model = PPO("MlpPolicy", env, n_steps=256, seed=1, device="cpu", verbose=0)
    model.learn(2048)  # warm-up: first-call costs out of the measured blocks
    with tempfile.TemporaryDirectory() as tmp:
        out = JsonlWriter(Path(tmp) / "metrics.jsonl")
        stop = StopFlag(Path(tmp))

        def block(guarded: bool) -> float:
            guard = handler = None
            if guarded:
                guard = GpuGuard(0, limits).start()
                handler = GuardHandler(Path(tmp), guard, out, stop.check, lambda: model.num_timesteps, lambda: None)
            recorder = RunRecorder(out, stop, 10**9, on_second=handler)
            start = time.perf_counter()
            model.learn(args.block, callback=recorder, reset_num_timesteps=False)
            wall = time.perf_counter() - start
            if guard is not None:
                guard.stop()
                assert not guard.paused and guard.error is None, guard.error
                guard_cpu[0] += guard.thread_cpu_s
                guard_cpu[1] += wall
            return args.block / wall

        guard_cpu = [0.0, 0.0]  # the guard threads' CPU seconds, the guarded blocks' wall seconds

        ratios = []
        for i in range(args.pairs):
            order = (False, True) if i % 2 == 0 else (True, False)
            rates = {g: block(g) for g in order}
            ratios.append(rates[True] / rates[False])
            print(f"pair {i + 1}: without guard {rates[False]:,.0f} steps/s   with guard {rates[True]:,.0f} steps/s   "
                  f"ratio {ratios[-1]:.3f}", flush=True)
        out.close()
    env.close()
    print(f"median ratio with/without over {args.pairs} pairs: {statistics.median(ratios):.3f} (goal >= 0.99)")
    print(f"the guard's thread used {guard_cpu[0] * 1000:.1f} ms of CPU in {guard_cpu[1]:.0f} s of guarded training "
          f"({100 * guard_cpu[0] / max(guard_cpu[1], 1e-9):.3f} % of one core)")


if __name__ == "__main__":
    main()
