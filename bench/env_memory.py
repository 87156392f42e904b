"""Env processes of SB3's SubprocVecEnv against rlpanel's lean ones, side by side in one run.

Two host processes, each a fresh interpreter that imports torch and stable-baselines3 the way the
worker does and builds N CartPole envs through ``core.worker.factory.build_vec_env``: A with
``vec_env: subproc-sb3`` (SB3's ``SubprocVecEnv``), B with ``vec_env: subproc`` (``LeanSubprocVecEnv``).
Each reports the start-up time of its N envs (construction to the first reset answered), the own
memory (USS, psutil ``memory_full_info().uss``) of each env process after stepping, and of the
start-method helpers (forkserver, resource tracker). Then they step random actions in turns,
A B, B A, A B ..., each turn ``--steps`` vectorised steps. Each turn is timed in wall time and in
CPU time of the whole process tree (the host, which stands for the learner's process, its
start-method helpers and every env process; user + system, psutil ``cpu_times``), which the other
load on a shared machine disturbs far less than wall time. Each pair gives a ratio B/A of steps/s
and one of CPU seconds per 1,000 env steps; the medians of the ratios, with their p25-p75 spread,
are the verdict. A process with gymnasium alone making one CartPole is the floor.
Goal: B's USS per env process <= 1/4 of A's; steps/s ratio >= 0.98 (CPU per step ratio <= 1.02).

    python bench/env_memory.py [--envs 8] [--rounds 11] [--steps 3000] [--start-method forkserver|spawn]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

# The worker's own top-level imports: its env processes import the worker's module again as
# __mp_main__ (multiprocessing's main-module fix-up), and so do these hosts' (they run with -m).
from core.worker import main as _worker  # noqa: F401

REPO = Path(__file__).resolve().parent.parent
MIB = 1 << 20

FLOOR = ("import json, os, gymnasium as gym, psutil; env = gym.make('CartPole-v1'); env.reset(seed=0); "
         "[env.step(env.action_space.sample()) for _ in range(200)]; "
         "print(json.dumps(psutil.Process().memory_full_info().uss))")


def uss(pid: int) -> int:
    import psutil

    return int(psutil.Process(pid).memory_full_info().uss)


def cpu_seconds(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        t = psutil.Process(pid).cpu_times()
        total += t.user + t.system
    return total


def host(kind: str, n_envs: int, method: str) -> None:
    """One side: build the envs, report start-up and memory, then step on each ``run K`` line of stdin."""
    import numpy as np
    import psutil
    import torch  # noqa: F401 - the worker's parent process holds torch and SB3 when it builds the envs

    from core.config.validate import validate_config
    from core.worker.factory import build_vec_env

    cfg = validate_config({"algo": "PPO", "runtime": {"n_envs": n_envs, "vec_env": kind, "start_method": method,
                                                      "seed": 0}}).config
    start = time.perf_counter()
    env, _ = build_vec_env(cfg)
    env.reset()
    startup = time.perf_counter() - start
    pids = [p.pid for p in env.processes]
    rng = np.random.default_rng(0)
    me = psutil.Process()
    helpers = [c.pid for c in me.children() if c.pid not in pids]  # forkserver, resource tracker

    def run(steps: int) -> dict[str, float]:
        actions = [rng.integers(0, 2, size=n_envs) for _ in range(steps)]
        before_host, before_envs = cpu_seconds([os.getpid()]), cpu_seconds([*helpers, *pids])
        t0 = time.perf_counter()
        for action in actions:
            env.step(action)
        wall = time.perf_counter() - t0
        host_cpu, envs_cpu = cpu_seconds([os.getpid()]) - before_host, cpu_seconds([*helpers, *pids]) - before_envs
        return {"wall": wall, "cpu": host_cpu + envs_cpu, "host_cpu": host_cpu, "envs_cpu": envs_cpu, "steps": steps * n_envs}

    run(300)  # warm-up: pages touched, caches filled
    report = {"startup_s": startup, "env_uss": [uss(p) for p in pids], "helper_uss": [uss(p) for p in helpers],
              "host_uss": uss(os.getpid())}
    print(json.dumps(report), flush=True)
    for line in sys.stdin:
        if line.startswith("run"):
            print(json.dumps(run(int(line.split()[1]))), flush=True)
        else:
            break
    report = {"env_uss": [uss(p) for p in pids]}
    print(json.dumps(report), flush=True)
    env.close()


def start_host(kind: str, n_envs: int, method: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "bench.env_memory", "--host", kind, str(n_envs), method],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)


def ask(proc: subprocess.Popen[str], line: str | None = None) -> dict[str, object]:
    assert proc.stdin is not None and proc.stdout is not None
    if line is not None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    answer = proc.stdout.readline()
    if not answer:
        raise RuntimeError(f"a bench host ended (exit code {proc.wait()})")
    data: dict[str, object] = json.loads(answer)
    return data


def mib(values: object) -> str:
    assert isinstance(values, list)
    return f"{statistics.median(values) / MIB:6.1f}" if values else "   -  "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--steps", type=int, default=3000, help="vectorised steps per turn (CPU times tick in 10 ms)")
    parser.add_argument("--start-method", default="forkserver", choices=["forkserver", "spawn", "fork"])
    parser.add_argument("--host", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.host:
        host(args.host[0], int(args.host[1]), args.host[2])
        return
    floor = json.loads(subprocess.run([sys.executable, "-c", FLOOR], capture_output=True, text=True, check=True).stdout)
    print(f"{args.envs} CartPole envs, start method {args.start_method}; floor (gymnasium alone, one process): "
          f"{floor / MIB:.1f} MiB USS")
    names = {"A": "subproc-sb3", "B": "subproc"}
    hosts, first = {}, {}
    for side, kind in names.items():  # one after the other: start-up times do not share the CPU
        hosts[side] = start_host(kind, args.envs, args.start_method)
        first[side] = ask(hosts[side])
    pairs = []
    for round_ in range(args.rounds):
        order = ("A", "B") if round_ % 2 == 0 else ("B", "A")  # A B, B A, ...: a drift in the load cancels out
        pair = {side: ask(hosts[side], f"run {args.steps}") for side in order}
        pairs.append(pair)
        a, b = pair["A"], pair["B"]
        ratio = (b["steps"] / b["wall"]) / (a["steps"] / a["wall"])  # type: ignore[operator]
        cpu_ratio = (b["cpu"] / b["steps"]) / (a["cpu"] / a["steps"])  # type: ignore[operator]
        print(f"  A {a['steps'] / a['wall']:8.0f} steps/s  B {b['steps'] / b['wall']:8.0f} steps/s  B/A {ratio:.3f}   "  # type: ignore[operator]
              f"CPU s/1k steps A {a['cpu'] / a['steps'] * 1e3:.4f}  B {b['cpu'] / b['steps'] * 1e3:.4f}  B/A {cpu_ratio:.3f}")  # type: ignore[operator]
    last = {side: ask(hosts[side], "end") for side in names}
    for proc in hosts.values():
        proc.wait(60)
    print(f"\n{'':14}{'USS/env MiB':>12}{'helpers MiB':>12}{'host MiB':>9}{'start-up s':>11}{'steps/s':>9}"
          f"{'wall us/step':>13}{'CPU s/1k steps':>15}{'host':>8}{'envs':>8}")
    for side, kind in names.items():
        rates = [p[side]["steps"] / p[side]["wall"] for p in pairs]  # type: ignore[operator]
        wall = statistics.median(p[side]["wall"] / p[side]["steps"] for p in pairs) * 1e6  # type: ignore[operator]
        cpu, host_cpu, envs_cpu = (statistics.median(p[side][key] / p[side]["steps"] for p in pairs) * 1e3  # type: ignore[operator]
                                   for key in ("cpu", "host_cpu", "envs_cpu"))
        env_uss = [max(x, y) for x, y in zip(first[side]["env_uss"], last[side]["env_uss"], strict=True)]  # type: ignore[call-overload]
        print(f"{side} {kind:11}{mib(env_uss):>12}{mib(first[side]['helper_uss']):>12}"
              f"{first[side]['host_uss'] / MIB:9.0f}{first[side]['startup_s']:11.2f}{statistics.median(rates):9.0f}"  # type: ignore[operator]
              f"{wall:13.1f}{cpu:15.4f}{host_cpu:8.4f}{envs_cpu:8.4f}")
    ratios = [(p["B"]["steps"] / p["B"]["wall"]) / (p["A"]["steps"] / p["A"]["wall"]) for p in pairs]  # type: ignore[operator]
    a_uss = statistics.median(max(x, y) for x, y in zip(first["A"]["env_uss"], last["A"]["env_uss"], strict=True))  # type: ignore[call-overload]
    b_uss = statistics.median(max(x, y) for x, y in zip(first["B"]["env_uss"], last["B"]["env_uss"], strict=True))  # type: ignore[call-overload]
    cpu_ratios = [(p["B"]["cpu"] / p["B"]["steps"]) / (p["A"]["cpu"] / p["A"]["steps"]) for p in pairs]  # type: ignore[operator]
    print(f"\nUSS per env process B/A: {b_uss / a_uss:.3f} (goal <= 0.25)   "
          f"start-up B/A: {first['B']['startup_s'] / first['A']['startup_s']:.2f}")  # type: ignore[operator]
    print(f"steps/s B/A, median of {len(ratios)} pairs: {spread(ratios)} (goal >= 0.98)")
    print(f"CPU s per 1,000 steps (whole process tree) B/A, median of {len(cpu_ratios)} pairs: {spread(cpu_ratios)} "
          "(goal <= 1.02)")


def spread(values: list[float]) -> str:
    """The median and the p25-p75 range of ``values``."""
    if len(values) < 2:
        return f"{values[0]:.3f}"
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{q2:.3f} (p25-p75 {q1:.3f}-{q3:.3f})"


if __name__ == "__main__":
    main()
