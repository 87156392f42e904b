"""Throughput of the rlpanel worker against a plain SB3 script, side by side.

Trains the same config (PPO, CartPole-v1, 8 DummyVecEnv envs, n_steps 256, ~50k steps) as a
plain SB3 script (A) and through ``python -m core.worker.main`` (B), alternating A B A B,
each in a fresh process. Throughput is steps / seconds spent inside ``learn()`` for both (the
worker's ``summary.json`` records its own), so imports and env start-up are left out of both.
Prints each pair with the CPU time per env step of each side (the training process, every thread, inside
``learn()``: the worker's ``train_cpu_s``), and the median ratios B/A (goal >= 0.99 for steps/s).

    python bench/overhead.py [--rounds 3] [--timesteps 50000] [--engine sb3|sbx]

``--same-threads`` gives the plain script the worker's torch threads (the worker picks them for the config and the
machine; torch's default is a thread per core): the ratio is then what the worker itself costs.
``--engine sbx`` trains the same config with SBX (JAX on the CPU) on both sides: plain SBX against the worker with
``runtime.engine: sbx`` (issue 45's goal: >= 0.99 too).
``--against DIR`` compares two workers instead: A is the worker of another checkout (``git archive
main | tar -x -C /tmp/main``), B this one's, on the same config: what a change to the worker costs
(the update cycles' time split, issue 31). ``--dqn`` trains DQN with ``train_freq`` 1 instead (an update
cycle every step: the split's worst case); it needs ``--against``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PLAIN = """
import json, sys, time
import torch
if sys.argv[3] == "sbx":
    from sbx import PPO
else:
    from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
if int(sys.argv[2]):
    torch.set_num_threads(int(sys.argv[2]))
env = make_vec_env("CartPole-v1", n_envs=8)
model = PPO("MlpPolicy", env, n_steps=256, seed=1, device="cpu", verbose=0)
start, cpu = time.monotonic(), time.process_time()
model.learn(total_timesteps=int(sys.argv[1]))
print(json.dumps({"steps": model.num_timesteps, "seconds": time.monotonic() - start, "cpu_s": time.process_time() - cpu}))
"""


class Side(NamedTuple):
    steps_per_s: float
    cpu_us_per_step: float  # CPU time of the training process (every thread) per env step, inside learn()


def plain(timesteps: int, threads: int = 0, engine: str = "sb3") -> Side:
    """The plain script's throughput, with ``threads`` torch threads (0: torch's own choice, a thread per core), on
    ``engine`` (sbx: JAX on the CPU, as the worker runs a cpu config)."""
    env = dict(os.environ, JAX_PLATFORMS="cpu") if engine == "sbx" else None
    out = subprocess.run([sys.executable, "-c", PLAIN, str(timesteps), str(threads), engine], capture_output=True,
                         text=True, check=True, env=env)
    data = json.loads(out.stdout)
    return Side(data["steps"] / data["seconds"], 1e6 * data["cpu_s"] / data["steps"])


CREATE = """
import json, sys
from core.config.validate import validate_config
from core.run.store import RunStore
print(RunStore(sys.argv[2]).create(validate_config(json.loads(sys.argv[1])).config))
"""
DQN_EVERY_STEP = {"algo": "DQN", "dqn": {"train_freq": 1, "learning_starts": 1000}, "runtime": {"n_envs": 1}}


def worker_raw(timesteps: int, telemetry_hz: float, dqn: bool = False, engine: str = "sb3") -> dict:
    from core.config.dotted import merge

    runtime = {"n_envs": 8, "seed": 1, "device": "cpu", "telemetry_hz": telemetry_hz}
    if engine != "sb3":  # only then: an older tree's schema (--against) knows no engine field
        runtime["engine"] = engine
    raw = {"algo": "PPO", "ppo": {"n_steps": 256}, "runtime": runtime,
           "budget": {"total_timesteps": timesteps}}
    return merge(raw, DQN_EVERY_STEP) if dqn else raw


def worker_threads_here(timesteps: int, telemetry_hz: float) -> int:
    """The torch threads the worker gives itself for the bench's config on this machine."""
    from core.config.validate import validate_config
    from core.estimate.device import worker_threads

    return worker_threads(validate_config(worker_raw(timesteps, telemetry_hz)).config, "cpu").count


def worker(timesteps: int, root: Path, telemetry_hz: float, tree: Path = REPO, dqn: bool = False,
           engine: str = "sb3") -> Side:
    from core.config.validate import validate_config
    from core.run.layout import RunDir
    from core.run.store import RunStore
    from core.util.files import read_json

    raw = worker_raw(timesteps, telemetry_hz, dqn, engine)
    if tree == REPO:
        run = RunStore(root).create(validate_config(raw).config)
    else:  # the other tree's own schema writes its run's config (a field it does not know would fail its worker)
        made = subprocess.run([sys.executable, "-c", CREATE, json.dumps(raw), str(root)], capture_output=True, text=True,
                              check=True, cwd=tree)
        run = Path(made.stdout.strip().splitlines()[-1])
    # the worker's own tree first on its path: ``-m`` puts the working folder there
    subprocess.run([sys.executable, "-m", "core.worker.main", str(run)], capture_output=True, check=True, cwd=tree)
    summary = read_json(RunDir(run).summary)
    return Side(summary["steps_per_s"], 1e6 * summary["train_cpu_s"] / summary["timesteps"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timesteps", type=int, default=50_000)
    parser.add_argument("--telemetry-hz", type=float, default=5.0,
                        help="the worker's telemetry rate (default 5, as users run it)")
    parser.add_argument("--against", type=Path, help="A: the worker of this checkout instead of plain SB3")
    parser.add_argument("--dqn", action="store_true", help="DQN, train_freq 1 (with --against)")
    parser.add_argument("--engine", choices=("sb3", "sbx"), default="sb3",
                        help="sbx: plain SBX against the worker training the same config with runtime.engine sbx")
    parser.add_argument("--same-threads", action="store_true",
                        help="the plain script with the worker's torch threads, not torch's thread per core: the ratio "
                             "is then the worker's own cost, without its choice of threads")
    args = parser.parse_args()
    if args.against is not None:
        if args.engine != "sb3":
            parser.error("--against compares two workers on SB3; --engine sbx compares the worker with plain SBX")
        return compare_workers(args)
    if args.dqn:
        parser.error("--dqn needs --against (the plain SB3 script trains PPO)")
    if args.engine == "sbx" and args.same_threads:
        parser.error("--same-threads is torch's: an SBX run's network is JAX's (XLA's own thread pool)")
    threads = worker_threads_here(args.timesteps, args.telemetry_hz) if args.same_threads else 0
    if threads:
        print(f"plain SB3 with the worker's {threads} torch thread(s)", flush=True)
    lib = "SBX" if args.engine == "sbx" else "SB3"
    ratios, cpu_ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            a = plain(args.timesteps, threads, args.engine)
            b = worker(args.timesteps, Path(tmp), args.telemetry_hz, engine=args.engine)
            ratios.append(b.steps_per_s / a.steps_per_s)
            cpu_ratios.append(b.cpu_us_per_step / a.cpu_us_per_step)
            print(f"round {i + 1}: plain {lib} {a.steps_per_s:,.0f} steps/s ({a.cpu_us_per_step:.1f} us CPU/step)   "
                  f"rlpanel worker {b.steps_per_s:,.0f} steps/s ({b.cpu_us_per_step:.1f} us CPU/step)   "
                  f"ratio {ratios[-1]:.3f}, CPU per step {cpu_ratios[-1]:.3f}", flush=True)
    print(f"median ratio worker/plain over {args.rounds} rounds: {statistics.median(ratios):.3f} (goal >= 0.99); "
          f"CPU per step worker/plain {statistics.median(cpu_ratios):.3f} (spread {min(cpu_ratios):.3f}-"
          f"{max(cpu_ratios):.3f})")


def compare_workers(args: argparse.Namespace) -> None:
    """A: the worker of ``args.against``, B: this one's, interleaved A B A B; the median ratios B/A."""
    ratios, cpu_ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            a = worker(args.timesteps, Path(tmp), args.telemetry_hz, args.against.resolve(), args.dqn)
            b = worker(args.timesteps, Path(tmp), args.telemetry_hz, REPO, args.dqn)
            ratios.append(b.steps_per_s / a.steps_per_s)
            cpu_ratios.append(b.cpu_us_per_step / a.cpu_us_per_step)
            print(f"round {i + 1}: A {a.steps_per_s:,.0f} steps/s ({a.cpu_us_per_step:.1f} us CPU/step)   "
                  f"B {b.steps_per_s:,.0f} steps/s ({b.cpu_us_per_step:.1f} us CPU/step)   "
                  f"ratio {ratios[-1]:.3f}, CPU per step {cpu_ratios[-1]:.3f}", flush=True)
    print(f"median B/A over {args.rounds} rounds: steps/s {statistics.median(ratios):.3f} (spread {min(ratios):.3f}-"
          f"{max(ratios):.3f}); CPU per step {statistics.median(cpu_ratios):.3f} (spread {min(cpu_ratios):.3f}-"
          f"{max(cpu_ratios):.3f})")


if __name__ == "__main__":
    main()
