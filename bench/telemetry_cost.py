"""What telemetry costs: CPU of the recorder, and training throughput with it on vs off.

    python bench/telemetry_cost.py [--seconds 30] [--hz 5] [--pairs 3] [--steps 20000] [--children 32] [--no-training]

The sampled tree stands in for a run's: this process with torch loaded (the worker) and ``--children``
python processes with numpy and gymnasium loaded (lean env processes).

1. Own memory against RSS: CPU per read of the tree's RSS and CPU % (``memory_info``, every tick)
   and of its own memory (``core.telemetry.host.own_memory``: PSS from ``smaps_rollup``), side by
   side, as a % of one core at 5 Hz, at 1 Hz and as ``HostMemoryReader`` paces it. Goal: <= 1 %.
2. The recorder at ``--hz`` for ``--seconds`` through the fake NVML (tests/fake_nvml, compiled
   here) in a subprocess: CPU time of the sampler thread and of the whole process (its main
   thread only sleeps) as a % of one core. Goal: <= 1 %.
3. Training throughput (steps/s from summary.json) of the real worker on a small PPO CartPole
   run with ``runtime.telemetry_hz`` = ``--hz`` vs 0, alternating on/off runs so drifts in machine
   load hit both sides; prints every pair and the median on/off ratio. Goal: >= 0.99.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fakenvml import FakeNvml, compile_fake_nvml  # noqa: E402

RECORDER = """
import json, os, sys, time
from pathlib import Path
from core.telemetry.nvml import nvml_status
from core.telemetry.recorder import TelemetryRecorder
run_dir, hz, seconds = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
nvml_status()  # NVML init (once per process) is not part of the steady cost
rec = TelemetryRecorder(run_dir / "telemetry.jsonl", hz, root_pid=os.getppid())
cpu0, wall0 = time.process_time(), time.monotonic()
rec.start()
time.sleep(seconds)
rec.stop()
cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
print(json.dumps({"wall": wall, "process_cpu": cpu, "thread_cpu": rec.thread_cpu_s, "ticks": rec.ticks,
                  "flushes": rec.flushes, "nvml": nvml_status().available,
                  "bytes": (run_dir / "telemetry.jsonl").stat().st_size}))
"""


def recorder_cost(env: dict[str, str], hz: float, seconds: float, label: str) -> dict:
    with tempfile.TemporaryDirectory() as run_dir:
        out = subprocess.run([sys.executable, "-c", RECORDER, run_dir, str(hz), str(seconds)], env=env,
                             cwd=REPO, capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    thread_pct = 100 * r["thread_cpu"] / r["wall"]
    process_pct = 100 * r["process_cpu"] / r["wall"]
    print(f"{label:<28} {r['ticks']:>5} ticks in {r['wall']:.1f} s, {r['flushes']} flushes, "
          f"{r['bytes'] / r['wall']:,.0f} B/s | sampler thread {thread_pct:.2f} % of a core, "
          f"whole process {process_pct:.2f} %  ({1000 * r['thread_cpu'] / max(r['ticks'], 1):.2f} ms/tick)")
    return {**r, "thread_pct": thread_pct, "process_pct": process_pct}


def own_memory_cost(pids: list[int], reads: int) -> None:
    """CPU per read of the tree's RSS + CPU % and of its own memory, and what each costs at a rate."""
    import psutil

    from core.telemetry.host import HostMemoryReader, own_memory

    procs = [psutil.Process(pid) for pid in pids]

    def rss_and_cpu() -> None:
        for proc in procs:
            with proc.oneshot():
                proc.memory_info()
                proc.cpu_percent(None)

    def own() -> None:
        own_memory(procs)

    costs = {}
    for name, read in (("RSS + CPU %", rss_and_cpu), ("own memory", own)):
        read()  # the first read opens files and caches Process objects
        samples = []
        for _ in range(reads):
            cpu0 = time.thread_time()
            read()
            samples.append(time.thread_time() - cpu0)
        costs[name] = statistics.median(samples)
    memory = own_memory(procs)
    reader = HostMemoryReader()
    reader.read(procs, time.monotonic())
    rss = sum(p.memory_info().rss for p in procs)
    print(f"{'per read of ' + str(len(procs)) + ' processes':<34} {'CPU ms':>8} {'5 Hz':>8} {'1 Hz':>8}   (% of one core)")
    for name, cost in costs.items():
        print(f"{name:<34} {1000 * cost:>8.2f} {500 * cost:>7.2f}% {100 * cost:>7.2f}%")
    ratio = costs["own memory"] / costs["RSS + CPU %"]
    print(f"own memory / RSS + CPU %: {ratio:.1f}x per read; paced by HostMemoryReader: a read every "
          f"{reader.period_s:.1f} s, {100 * reader.last_cost_s / reader.period_s:.2f} % of a core")
    if memory is not None:
        print(f"the tree's memory: RSS sum {rss / 2**20:,.0f} MiB, own ({memory.measure}) "
              f"{memory.memory_bytes / 2**20:,.0f} MiB, ratio {memory.memory_bytes / rss:.2f}")


def train_once(env: dict[str, str], runs: Path, hz: float, steps: int) -> float:
    from core.config.dotted import merge
    from core.config.validate import validate_config
    from core.run.layout import RunDir
    from core.run.store import RunStore

    raw = merge({"algo": "PPO", "env": {"id": "CartPole-v1"}, "ppo": {"n_steps": 512, "batch_size": 256, "n_epochs": 4},
                 "runtime": {"n_envs": 4, "vec_env": "dummy", "device": "auto", "telemetry_hz": hz},
                 "budget": {"total_timesteps": steps, "checkpoint_every": 0}}, {})
    run = RunStore(runs).create(validate_config(raw).config)
    subprocess.run([sys.executable, "-m", "core.worker.main", str(run)], env=env, cwd=REPO,
                   capture_output=True, text=True, check=True)
    summary = json.loads(RunDir(run).summary.read_text())
    return float(summary["steps_per_s"])


def throughput(env: dict[str, str], hz: float, pairs: int, steps: int) -> None:
    ratios = []
    with tempfile.TemporaryDirectory() as home:
        env = {**env, "RLPANEL_HOME": home}
        runs = Path(home) / "runs"
        runs.mkdir()
        train_once(env, runs, 0, max(steps // 4, 2048))  # warm the disk cache (torch, SB3)
        for i in range(pairs):
            first_on = i % 2 == 0  # alternate the order too
            a = train_once(env, runs, hz if first_on else 0, steps)
            b = train_once(env, runs, 0 if first_on else hz, steps)
            on, off = (a, b) if first_on else (b, a)
            ratios.append(on / off)
            print(f"pair {i + 1}: telemetry {hz:g} Hz {on:,.0f} steps/s, off {off:,.0f} steps/s, ratio {on / off:.3f}")
    print(f"throughput ratio on/off: median {statistics.median(ratios):.3f} over {pairs} pairs (goal >= 0.99)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--hz", type=float, default=5.0)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--children", type=int, default=32, help="idle child processes in the sampled tree "
                        "(stand-ins for env processes: numpy and gymnasium loaded)")
    parser.add_argument("--reads", type=int, default=30, help="reads of the tree per figure of part 1")
    parser.add_argument("--no-training", action="store_true", help="only the recorder's CPU cost")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="rlpanel-bench-"))
    fake = FakeNvml(compile_fake_nvml(work / "lib"), work / "fake_nvml.cfg")
    fake.configure(count=1, name="Fake RTX 4060 Laptop GPU", temperature=65, util_gpu=80, procs=f"{os.getpid()}:1000")
    env = fake.env()
    env.setdefault("RLPANEL_HOME", str(work / "home"))

    import torch  # noqa: F401 - this process stands in for the worker: its mappings are what a read walks

    ready = "import numpy, gymnasium, sys, time; print(flush=True); time.sleep(3600)"
    children = [subprocess.Popen([sys.executable, "-c", ready], stdout=subprocess.PIPE, text=True)
                for _ in range(args.children)]
    try:
        for child in children:
            child.stdout.readline()  # numpy and gymnasium are loaded
        own_memory_cost([os.getpid(), *(c.pid for c in children)], args.reads)
        print(f"\nrecorder at {args.hz:g} Hz for {args.seconds:g} s, process tree of {args.children + 1} "
              f"(goal: <= 1 % of one core)")
        recorder_cost(env, args.hz, args.seconds, "fake NVML, 1 GPU")
        no_nvml = {k: v for k, v in env.items() if k not in ("LD_LIBRARY_PATH", "FAKE_NVML_CONFIG")}
        recorder_cost(no_nvml, args.hz, min(args.seconds, 10), "no NVML (host only)")
    finally:
        for child in children:
            child.kill()
            child.wait()
    if not args.no_training:
        print(f"\ntraining throughput, PPO CartPole {args.steps:,} steps, alternating on/off")
        throughput(env, args.hz, args.pairs, args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
