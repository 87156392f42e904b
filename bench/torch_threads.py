"""Torch threads "auto" (``core.util.threads``) against the old behaviour, in short real trainings side by side.

Two host processes per case, each a fresh interpreter that sets the thread environment the way a worker
does before torch loads, then builds the env and model through ``core.worker.factory`` (CPU):
A, the old worker: ``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` only pinned to 1 for a subprocess vec env,
``torch.get_num_threads()`` left as torch sets it (one thread per core with a dummy vec env);
B, the new worker: the count ``resolved_torch_threads`` gives for the config here, set in the
environment and through ``torch.set_num_threads`` (``core.worker.main`` + ``session``).
Then they train in turns, A B, B A, A B ..., each turn ``model.learn`` over ``--cycles`` whole
update cycles (the model carries on from turn to turn; the first cycle is a warm-up). Each turn is
timed in wall time and in CPU time (user + system) of the host and every child it has (the env
processes of a subprocess vec env, the forkserver), which the other load of a shared machine
disturbs less than wall time. Each pair gives a ratio B/A of steps/s and one of CPU s per 1,000
steps; the medians of the ratios, with their p25-p75 spread, are the verdict.

``--cores N`` resolves B's count as if N cores were usable (the same rule the worker applies to its
CPU affinity); run it under ``taskset -c`` with N CPUs to measure the rule's other branch.

    python bench/torch_threads.py [--rounds 9] [--cycles 1] [--only laptop|dummy4|subproc4] [--cores N]
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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.env_memory import ask, spread  # noqa: E402 - the house helpers, found through REPO above

CARTPOLE = {"id": "CartPole-v1"}
# The laptop-8gb preset's PPO (n_epochs 40, batch 512) with a shorter rollout, so that a turn is a few
# thousand steps: the update's share, where torch's threads work, stays as large as the preset's.
CASES: dict[str, dict[str, Any]] = {
    "laptop": {"algo": "PPO", "env": CARTPOLE, "ppo": {"n_steps": 2048, "n_epochs": 40, "batch_size": 512},
               "runtime": {"n_envs": 1, "vec_env": "dummy"}},
    "dummy4": {"algo": "PPO", "env": CARTPOLE, "ppo": {"n_steps": 512},
               "runtime": {"n_envs": 4, "vec_env": "dummy"}},
    "subproc4": {"algo": "PPO", "env": CARTPOLE, "ppo": {"n_steps": 512},
                 "runtime": {"n_envs": 4, "vec_env": "subproc"}},
}
LABELS = {"laptop": "laptop-8gb PPO, 1 env dummy, n_steps 2048, 40 epochs, batch 512",
          "dummy4": "PPO defaults, 4 envs dummy, n_steps 512",
          "subproc4": "PPO defaults, 4 envs subproc (lean env processes), n_steps 512"}


def config(case: str) -> Any:
    from core.config.validate import validate_config

    raw = json.loads(json.dumps(CASES[case]))
    raw["runtime"].update({"device": "cpu", "seed": 0})
    return validate_config(raw).config


def tree_cpu_s() -> float:
    """CPU seconds of this process and every live child (env processes, forkserver)."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for proc in [me, *me.children(recursive=True)]:
        try:
            t = proc.cpu_times()
        except psutil.Error:  # a helper that ended between the listing and the read: its time is gone with it
            continue
        total += t.user + t.system
    return total


def host(side: str, case: str, cores: int | None) -> None:
    """One side: set the threads as that worker would, build env and model, train a turn per ``run K`` line."""
    from core.util.threads import resolved_torch_threads
    from core.worker.main import set_thread_env

    cfg = config(case)
    rt = cfg.runtime
    subproc = rt.vec_env != "dummy"
    count = resolved_torch_threads(None, rt.n_envs, subproc, "cpu", cores) if side == "B" else None
    set_thread_env(count, subproc)  # A: the old call (None); B: the resolved count, as the worker now does
    import torch

    from core.worker.factory import build_model, build_vec_env

    if count is not None:
        torch.set_num_threads(count)
    env, _ = build_vec_env(cfg)
    model = build_model(cfg, env, device="cpu")
    cycle = cfg.params.n_steps * rt.n_envs  # type: ignore[union-attr]

    def run(cycles: int) -> dict[str, float]:
        before_cpu, before_steps = tree_cpu_s(), model.num_timesteps
        t0 = time.perf_counter()
        model.learn(cycles * cycle, reset_num_timesteps=False)
        wall = time.perf_counter() - t0
        return {"wall": wall, "cpu": tree_cpu_s() - before_cpu, "steps": model.num_timesteps - before_steps}

    run(1)  # warm-up: pages touched, torch's kernels and thread pools started
    print(json.dumps({"threads": torch.get_num_threads(), "cycle": cycle}), flush=True)
    for line in sys.stdin:
        if not line.startswith("run"):
            break
        print(json.dumps(run(int(line.split()[1]))), flush=True)
    env.close()


def start_host(side: str, case: str, cores: int | None) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = str(REPO)
    extra = [str(cores)] if cores else []
    return subprocess.Popen([sys.executable, "-m", "bench.torch_threads", "--host", side, case, *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)


def bench_case(case: str, rounds: int, cycles: int, cores: int | None) -> dict[str, Any]:
    hosts, first = {}, {}
    for side in ("A", "B"):  # one after the other: their warm-ups do not share the CPU
        hosts[side] = start_host(side, case, cores)
        first[side] = ask(hosts[side])
    print(f"\n== {case}: {LABELS[case]}; {first['A']['cycle']} steps a cycle, {cycles} a turn; "
          f"threads A {first['A']['threads']} (old), B {first['B']['threads']} (auto) ==", flush=True)
    pairs = []
    for round_ in range(rounds):
        order = ("A", "B") if round_ % 2 == 0 else ("B", "A")  # a drift in the machine's load cancels out
        pair = {side: ask(hosts[side], f"run {cycles}") for side in order}
        pairs.append(pair)
        a, b = pair["A"], pair["B"]
        print(f"  A {rate(a):7.0f} steps/s {cpu_per_k(a):6.3f} CPU s/1k   B {rate(b):7.0f} steps/s {cpu_per_k(b):6.3f} "
              f"CPU s/1k   B/A {rate(b) / rate(a):.3f}  CPU B/A {cpu_per_k(b) / cpu_per_k(a):.3f}", flush=True)
    for proc in hosts.values():
        assert proc.stdin is not None
        proc.stdin.write("end\n")
        proc.stdin.flush()
        proc.wait(120)
    return {"case": case, "threads": (first["A"]["threads"], first["B"]["threads"]), "pairs": pairs}


def rate(turn: dict[str, Any]) -> float:
    return float(turn["steps"] / turn["wall"])


def cpu_per_k(turn: dict[str, Any]) -> float:
    return float(turn["cpu"] / turn["steps"] * 1e3)


def table(results: list[dict[str, Any]]) -> str:
    rows = [f"{'case':9} {'thr A':>5} {'thr B':>5} {'steps/s A':>10} {'steps/s B':>10} {'B/A steps/s (p25-p75)':>32} "
            f"{'CPU s/1k A':>11} {'CPU s/1k B':>11} {'B/A CPU/step (p25-p75)':>32}"]
    for r in results:
        pairs = r["pairs"]
        med = {side: statistics.median(rate(p[side]) for p in pairs) for side in ("A", "B")}
        cpu = {side: statistics.median(cpu_per_k(p[side]) for p in pairs) for side in ("A", "B")}
        ratios = [rate(p["B"]) / rate(p["A"]) for p in pairs]
        cpu_ratios = [cpu_per_k(p["B"]) / cpu_per_k(p["A"]) for p in pairs]
        rows.append(f"{r['case']:9} {r['threads'][0]:>5} {r['threads'][1]:>5} {med['A']:>10.0f} {med['B']:>10.0f} "
                    f"{spread(ratios):>32} {cpu['A']:>11.3f} {cpu['B']:>11.3f} {spread(cpu_ratios):>32}")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="A/B pairs per case")
    parser.add_argument("--cycles", type=int, default=1, help="whole update cycles per turn")
    parser.add_argument("--only", choices=list(CASES), action="append")
    parser.add_argument("--cores", type=int, help="resolve B's count as if this many cores were usable")
    parser.add_argument("--host", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.host:
        host(args.host[0], args.host[1], int(args.host[2]) if len(args.host) > 2 else None)
        return
    import psutil

    from core.util.threads import usable_cores

    print(f"this machine: {psutil.cpu_count(logical=False)} physical / {psutil.cpu_count()} logical CPUs, "
          f"{len(os.sched_getaffinity(0))} in this process's affinity, usable cores (the rule's input) "
          f"{args.cores or usable_cores()}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = [bench_case(case, args.rounds, args.cycles, args.cores) for case in (args.only or list(CASES))]
    print(f"\nmedians of {args.rounds} interleaved pairs; A: old worker (torch's own count), B: auto\n{table(results)}")


if __name__ == "__main__":
    main()
