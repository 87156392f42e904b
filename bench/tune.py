"""Steps/s of ``rlpanel tune``'s pick against SB3's defaults, for PPO on CartPole and on a 3 ms-per-step env;
with ``--probes-per-budget``, how many candidates a tune probes in its budget with and without reused probe processes.

For each env: a tune (its table printed as it goes), then SB3's defaults (1 DummyVecEnv env,
n_steps 2048, batch 64, torch's own thread count) and the pick probed in turn, A B A B, with the
same probe (whole update cycles after a warm-up, each in a fresh process). Prints both medians and
the ratio pick / defaults (goal >= 1.5). The pick keeps what is learned (the rollout of 2048
transitions, batch 64) unless ``--allow-learning-changes``.

``--probes-per-budget``: ``rlpanel tune --algo PPO --env CartPole-v1`` as it is (SB3's defaults,
the default 120 s budget unless ``--budget-s``), each round once with a fresh process per candidate
(as before the probe pool: ``ProbePool(reuse=False)``) and once with the pool, in turn; prints the
probes, process starts and rows of each side by side (goal: >= 10 probes in 120 s on a 2-core machine).
torch's facts are asked once before, so neither side pays for that.

    python bench/tune.py [--budget-s 180] [--probe-s 8] [--rounds 2] [--allow-learning-changes] [--only cartpole|sleepy]
    python bench/tune.py --probes-per-budget [--budget-s 120] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

ENVS: dict[str, dict[str, Any]] = {
    "cartpole": {"id": "CartPole-v1"},
    "sleepy": {"id": None, "entry_point": "bench.envs.sleepy:SleepyCartPole", "kwargs": {"delay_s": 0.003}},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-s", type=float, default=180.0)
    parser.add_argument("--probe-s", type=float, default=8.0, help="measured seconds of each side-by-side probe")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--allow-learning-changes", action="store_true")
    parser.add_argument("--only", choices=list(ENVS))
    parser.add_argument("--probes-per-budget", action="store_true",
                        help="count the probes of a default tune with a fresh process per candidate and with the pool")
    args = parser.parse_args()
    os.environ.setdefault("RLPANEL_HOME", tempfile.mkdtemp(prefix="rlpanel-bench-tune-"))
    os.chdir(REPO)  # the probes import bench.envs from here
    if args.probes_per_budget:
        return probes_per_budget(args.budget_s if "--budget-s" in sys.argv else 120.0, args.rounds)

    from core.config.trust import trust

    trust("bench.envs.sleepy")
    summary = []
    for name, env in ENVS.items():
        if args.only and name != args.only:
            continue
        summary.append(bench_env(name, env, args))
    print(f"\n== summary (this machine: {os.cpu_count() or 0} CPUs, load {_load()}) ==")
    for line in summary:
        print(line)
    return 0


def bench_env(name: str, env: dict[str, Any], args: argparse.Namespace) -> str:
    from core.config.validate import validate_config
    from core.throughput.knobs import short
    from core.throughput.probe import run_probe
    from core.throughput.search import TuneOptions, Tuner
    from core.throughput.table import HEADER, format_row, format_table

    defaults = validate_config({"algo": "PPO", "env": env, "runtime": {"device": "cpu"}}).config
    print(f"\n== PPO on {name}: tune for {args.budget_s:g} s ==\n{HEADER}", flush=True)
    tuner = Tuner(defaults, TuneOptions(budget_s=args.budget_s, allow_learning_changes=args.allow_learning_changes),
                  on_row=lambda i, row: print(format_row(i + 1, row), flush=True))
    result = tuner.run()
    print(f"\n{format_table(result)}\nsearch ended: {result.stopped}", flush=True)
    if result.picked is None:
        return f"{name}: nothing measured"
    pick_cfg = tuner.config_for(result.picked.settings)  # the same config the tune probed
    assert pick_cfg is not None
    speeds: dict[str, list[float]] = {"defaults": [], "pick": []}
    for r in range(args.rounds):
        for side, cfg in (("defaults", defaults), ("pick", pick_cfg)):
            probe = run_probe(cfg, args.probe_s)
            print(f"round {r + 1} {side:<8} {probe.steps_per_s or 0:8,.0f} steps/s  {probe.error or ''}", flush=True)
            if probe.steps_per_s:
                speeds[side].append(probe.steps_per_s)
    if not speeds["defaults"] or not speeds["pick"]:
        return f"{name}: a side-by-side probe failed"
    a, b = statistics.median(speeds["defaults"]), statistics.median(speeds["pick"])
    return (f"PPO {name:<9} SB3 defaults {a:7,.0f} steps/s   tuned {b:7,.0f} steps/s   ratio {b / a:.2f}x   "
            f"pick: {short(result.picked.settings)}")


def probes_per_budget(budget_s: float, rounds: int) -> int:
    from core.config.validate import validate_config
    from core.estimate.device import torch_facts
    from core.throughput.probe import ProbePool
    from core.throughput.search import TuneOptions, Tuner
    from core.throughput.table import format_table

    torch_facts()  # cached for both sides, as on a machine that has tuned or estimated before
    cfg = validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"}}).config
    lines = []
    for r in range(rounds):
        for side, reuse in (("fresh process per probe", False), ("probe pool", True)):
            pool = ProbePool(reuse=reuse)
            load = _load()
            result = Tuner(cfg, TuneOptions(budget_s=budget_s), prober=pool).run()
            print(f"\n== round {r + 1}, {side} (load before {load}) ==\n{format_table(result)}\nsearch ended: "
                  f"{result.stopped}", flush=True)
            lines.append(f"round {r + 1}  {side:<24} {pool.probes:>3} probes  {pool.starts:>3} process starts  "
                         f"{len(result.rows):>3} rows  load before {load}")
    print(f"\n== probes in {budget_s:g} s, PPO CartPole-v1 as it is (this machine: {os.cpu_count() or 0} CPUs) ==")
    print("\n".join(lines))
    return 0


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


if __name__ == "__main__":
    sys.exit(main())
