"""What the GPU guard costs a run that never gets hot: the worker's steps/s with and without it.

Trains the same config (PPO, CartPole-v1, 8 DummyVecEnv envs, n_steps 256, ~30k steps, telemetry
off so only the guard differs) through ``python -m core.training.worker``, in interleaved pairs,
each run a fresh process: without the guard (NVML cannot load: the guard is not started) and with
it (the test suite's fake NVML, compiled here, at 60 C under a 93 C slowdown threshold: the
guard's thread reads the GPU once a second and the training thread looks at it once a second,
between steps). Throughput is the worker's own ``summary.json`` figure (steps / seconds in
``learn()``). Prints each pair and the median ratio with/without (goal >= 0.99). Linux (the fake
NVML is a shared library put on LD_LIBRARY_PATH); with a real NVIDIA driver installed the
"without" runs still find it, and the bench says so and stops.

    python bench/thermal_guard.py [--rounds 5] [--timesteps 30000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def worker(timesteps: int, root: Path, env: dict[str, str]) -> tuple[float, bool]:
    """Steps/s of one worker run, and whether its guard ran (its event log says so)."""
    from core.config.validate import validate_config
    from core.run.layout import RunDir
    from core.run.store import RunStore
    from core.util.files import read_json
    from core.util.jsonl import read_jsonl

    cfg = validate_config({"algo": "PPO", "ppo": {"n_steps": 256}, "runtime": {"n_envs": 8, "seed": 1, "device": "cpu",
                                                                              "telemetry_hz": 0, "torch_threads": 1},
                           "budget": {"total_timesteps": timesteps, "checkpoint_every": 0, "checkpoint_minutes": 0}}).config
    run = RunStore(root).create(cfg)
    subprocess.run([sys.executable, "-m", "core.training.worker", str(run)], capture_output=True, check=True, cwd=REPO,
                   env=env)
    guarded = any("thermal guard on" in str(r.get("message")) for r in read_jsonl(RunDir(run).metrics))
    return float(read_json(RunDir(run).summary)["steps_per_s"]), guarded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timesteps", type=int, default=30_000)
    args = parser.parse_args()
    from tests.fakenvml import FakeNvml, compile_fake_nvml

    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        fake = FakeNvml(compile_fake_nvml(Path(tmp) / "lib"), Path(tmp) / "nvml.cfg")
        fake.configure(count=1, temperature=60, temperature_slowdown=93)
        plain_env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "FAKE_NVML_CONFIG")}
        plain_env["PYTHONPATH"] = str(REPO)
        guarded_env = fake.env(plain_env)
        for i in range(args.rounds):
            first, second = (plain_env, guarded_env) if i % 2 == 0 else (guarded_env, plain_env)
            results = {id(e): worker(args.timesteps, Path(tmp), e) for e in (first, second)}
            (a, a_guard), (b, b_guard) = results[id(plain_env)], results[id(guarded_env)]
            if a_guard or not b_guard:
                sys.exit(f"the pair did not differ in the guard (without: {a_guard}, with: {b_guard}): a real NVML here?")
            ratios.append(b / a)
            print(f"pair {i + 1}: without guard {a:,.0f} steps/s   with guard {b:,.0f} steps/s   ratio {b / a:.3f}",
                  flush=True)
    print(f"median ratio with/without over {args.rounds} pairs: {statistics.median(ratios):.3f} (goal >= 0.99)")


if __name__ == "__main__":
    main()
