"""SB3 against SBX (JAX) on this machine: steps/s side by side, and whether the two learn the same.

The same plain script trains each case with either engine, same hyperparameters, same seeds: stable-baselines3
with one torch thread, or sbx-rl (SB3's maintainer's JAX re-implementation, same API) with JAX on the CPU. Each
seed is one pair, each side a fresh process, the order turned every pair (A B, B A, ...) so that the shared
machine's drift (it swings up to 8x here) falls on both sides. Steps/s is steps / seconds inside ``learn()``
(imports and env start-up left out of both; SBX's first-step JIT compile is inside, as a run pays it; the "warm"
figure starts at the first update cycle past a tenth of the budget, compiles done), with the
CPU time per env step beside it (every thread of the process: JAX may use more than one core).

After training, each run's final return is its policy's mean return over ``--eval-episodes`` deterministic
episodes of a fresh env. Per engine: the IQM of the final returns and its 95 % percentile-bootstrap interval,
computed by the results code's own group statistics (``core.results.stats.aggregate``, as the Results tab's
group rows show them), and whether the two intervals overlap.

Cases: PPO on CartPole-v1 (8 dummy envs, n_steps 256), SAC on Pendulum-v1, and DQN on CartPole-v1 (the case
where SBX was slower). Goals: SBX / SB3 steps/s >= 2.5 for PPO and SAC (median of the pairs' ratios), and the
IQM intervals overlap at the same budget.

    python bench/engines.py [--seeds 5] [--only ppo,sac,dqn] [--ppo-steps 20000] [--sac-steps 3000]
                            [--dqn-steps 20000] [--dqn-seeds 3] [--eval-episodes 10] [--warm-cache]
                            [--ppo-n-steps 256]

SBX trains with rlpanel's class where it has one (``core.worker.sbx_classes``: PPO, whose update compiles once);
``SBX_CLASSES=sbx`` in the environment trains SBX's own classes instead.

``--warm-cache`` gives every SBX run JAX's persistent compilation cache in a folder of the bench's own, filled by one
throwaway SBX run of each case before its pairs: the measured SBX runs load their programs instead of compiling them,
as an rlpanel worker does from a user's second run of the same shapes on (``core.estimate.xla.set_jax_env``). Without it
each SBX run compiles from nothing, as a first run does.

Defaults take ~15 min on the 2-core development machine; raise the steps for a longer, steadier figure.
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

ENGINES = ("sb3", "sbx")

PLAIN = """
import json, sys, time
case = json.loads(sys.argv[1])
if case["engine"] == "sb3":
    import torch
    torch.set_num_threads(1)
    import stable_baselines3 as lib
else:
    import sbx as lib
    if case["own"]:  # rlpanel's subclasses, as its worker trains (core.worker.sbx_classes)
        sys.path.insert(0, case["repo"])
        from core.worker.sbx_classes import OWN
        lib = type("lib", (), {name: OWN.get(name) or getattr(lib, name) for name in ("PPO", "SAC", "DQN")})
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.evaluation import evaluate_policy

class Warm(BaseCallback):
    # the clock and the step count at the first rollout start past a tenth of the budget: JIT compiles done
    mark = None
    def _on_rollout_start(self):
        if self.mark is None and self.num_timesteps >= case["timesteps"] // 10:
            self.mark = (time.monotonic(), time.process_time(), self.num_timesteps)
    def _on_step(self):
        return True

env = make_vec_env(case["env"], n_envs=case["n_envs"], seed=case["seed"])
model = getattr(lib, case["algo"])("MlpPolicy", env, seed=case["seed"], device="cpu", verbose=0, **case["hp"])
start, cpu = time.monotonic(), time.process_time()
warm = Warm()
model.learn(total_timesteps=case["timesteps"], callback=warm)
end, end_cpu = time.monotonic(), time.process_time()
seconds, cpu_s = end - start, end_cpu - cpu
warm_steps = model.num_timesteps - warm.mark[2] if warm.mark else 0
warm_s = end - warm.mark[0] if warm.mark else 0.0
eval_env = make_vec_env(case["env"], n_envs=1, seed=case["seed"] + 10_000)
ret, _ = evaluate_policy(model, eval_env, n_eval_episodes=case["eval_episodes"], deterministic=True)
print(json.dumps({"steps": model.num_timesteps, "seconds": seconds, "cpu_s": cpu_s, "warm_steps": warm_steps,
                  "warm_s": warm_s, "return": float(ret)}))
"""


class Case(NamedTuple):
    name: str
    algo: str
    env: str
    n_envs: int
    hp: dict
    goal: bool  # the goals apply (PPO, SAC); DQN is shown for what it is


# SB3's defaults spelled out where SBX's differ (as rlpanel's schema passes every value): SBX's PPO has no orthogonal
# init by default, its DQN 256-unit layers and a target update every 1,000 steps (SB3: 64-64, 10,000). Left to the
# libraries' own defaults, DQN "learned" 9 (SB3) against 94 (SBX) at 20k steps: two different configs.
CASES = (
    Case("ppo", "PPO", "CartPole-v1", 8, {"n_steps": 256, "policy_kwargs": {"ortho_init": True}}, True),
    Case("sac", "SAC", "Pendulum-v1", 1, {}, True),
    Case("dqn", "DQN", "CartPole-v1", 1, {"target_update_interval": 10_000, "policy_kwargs": {"net_arch": [64, 64]}},
         False),
)
GOAL_RATIO = 2.5


class Side(NamedTuple):
    steps_per_s: float  # over the whole of learn(), the JIT compile included: what a run pays
    warm_steps_per_s: float | None  # from the first update cycle past a tenth of the budget: compiles done
    cpu_us_per_step: float  # CPU time of the training process (every thread) per env step, inside learn()
    final_return: float


def train(case: Case, engine: str, seed: int, timesteps: int, eval_episodes: int, cache: Path | None = None) -> Side:
    """One plain training of ``case`` with ``engine`` in a fresh process (SBX with JAX's compilation cache in
    ``cache``, when given; SBX's own classes where ``SBX_CLASSES`` is ``sbx``, else rlpanel's where it has one)."""
    spec = {"engine": engine, "algo": case.algo, "env": case.env, "n_envs": case.n_envs, "hp": case.hp,
            "seed": seed, "timesteps": timesteps, "eval_episodes": eval_episodes, "repo": str(REPO),
            "own": os.environ.get("SBX_CLASSES", "rlpanel") == "rlpanel"}
    env = dict(os.environ, JAX_PLATFORMS="cpu")  # the CPU on every machine: the 2-core box has no GPU
    if cache is not None:  # what the worker sets (core.estimate.xla.set_jax_env): every program kept
        env.update(JAX_COMPILATION_CACHE_DIR=str(cache), JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    out = subprocess.run([sys.executable, "-c", PLAIN, json.dumps(spec)], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{engine} {case.algo} seed {seed} failed:\n{out.stderr[-2000:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    warm = data["warm_steps"] / data["warm_s"] if data["warm_s"] > 0 else None
    return Side(data["steps"] / data["seconds"], warm, 1e6 * data["cpu_s"] / data["steps"], data["return"])


def overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool | None:
    """Whether two intervals share a point; None when either is missing."""
    if a is None or b is None:
        return None
    return a[0] <= b[1] and b[0] <= a[1]


def run_case(case: Case, seeds: int, timesteps: int, eval_episodes: int, cache: Path | None = None) -> list[str]:
    """The pairs of ``case``, printed as they come; returns the summary lines. With ``cache``, one throwaway SBX run
    fills JAX's compilation cache first (seed 99: the programs do not depend on the seed)."""
    from core.results.stats import aggregate

    print(f"\n== {case.algo} on {case.env} ({case.n_envs} env{'s' if case.n_envs > 1 else ''}"
          f"{', ' + ', '.join(f'{k} {v}' for k, v in case.hp.items()) if case.hp else ''}), {timesteps:,} steps, "
          f"{seeds} seeds{', SBX with a warm compilation cache' if cache else ''}, load before {_load()} ==", flush=True)
    if cache is not None:
        filled = train(case, "sbx", 99, timesteps, 1, cache)
        print(f"cache filled by a throwaway SBX run: {_side(filled)}", flush=True)
    sides: dict[str, list[Side]] = {e: [] for e in ENGINES}
    ratios, warm_ratios, cpu_ratios = [], [], []
    for seed in range(seeds):
        order = ENGINES if seed % 2 == 0 else ENGINES[::-1]
        got = {e: train(case, e, seed, timesteps, eval_episodes, cache) for e in order}
        for e in ENGINES:
            sides[e].append(got[e])
        ratios.append(got["sbx"].steps_per_s / got["sb3"].steps_per_s)
        cpu_ratios.append(got["sbx"].cpu_us_per_step / got["sb3"].cpu_us_per_step)
        a, b = got["sb3"], got["sbx"]
        if a.warm_steps_per_s and b.warm_steps_per_s:
            warm_ratios.append(b.warm_steps_per_s / a.warm_steps_per_s)
        print(f"seed {seed} ({' '.join(order)}): SB3 {_side(a)}   SBX {_side(b)}   ratio {ratios[-1]:.2f}"
              f"{f' (warm {warm_ratios[-1]:.2f})' if len(warm_ratios) == seed + 1 else ''}, "
              f"CPU per step {cpu_ratios[-1]:.2f}", flush=True)
    ratio = statistics.median(ratios)
    warm = f"{statistics.median(warm_ratios):.2f}" if warm_ratios else "unknown (no warm span)"
    lines = [f"{case.algo} {case.env}: SB3 {statistics.median(s.steps_per_s for s in sides['sb3']):,.0f} steps/s, "
             f"SBX {statistics.median(s.steps_per_s for s in sides['sbx']):,.0f} steps/s (medians); SBX/SB3 median of "
             f"{seeds} pairs {ratio:.2f} (spread {min(ratios):.2f}-{max(ratios):.2f})"
             + (f", goal >= {GOAL_RATIO}: {'met' if ratio >= GOAL_RATIO else 'NOT met'}" if case.goal else "")
             + f"; warm (after the first tenth, compiles done) {warm}; CPU per step SBX/SB3 "
               f"{statistics.median(cpu_ratios):.2f}"]
    stats = {e: aggregate([s.final_return for s in sides[e]]) for e in ENGINES}
    for e in ENGINES:
        agg = stats[e]
        ci = f"[{agg.iqm_ci95[0]:.1f}, {agg.iqm_ci95[1]:.1f}]" if agg.iqm_ci95 else f"no interval ({agg.note})"
        lines.append(f"  final return {e.upper()}: IQM {agg.iqm:.1f}, 95 % bootstrap CI {ci}, over {agg.n} seeds")
    both = overlap(stats["sb3"].iqm_ci95, stats["sbx"].iqm_ci95)
    lines.append("  IQM intervals overlap: " + ("unknown (an interval is missing)" if both is None else
                                                  "yes" if both else "NO") + (" (goal)" if case.goal else ""))
    print("\n".join(lines), flush=True)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds (pairs) for PPO and SAC")
    parser.add_argument("--dqn-seeds", type=int, default=3)
    parser.add_argument("--only", default="ppo,sac,dqn", help="comma-separated cases: ppo, sac, dqn")
    parser.add_argument("--ppo-steps", type=int, default=20_000)
    parser.add_argument("--sac-steps", type=int, default=3_000)
    parser.add_argument("--dqn-steps", type=int, default=20_000)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--warm-cache", action="store_true",
                        help="SBX loads its programs from a compilation cache one throwaway run filled (a second run)")
    parser.add_argument("--ppo-n-steps", type=int, default=256, help="PPO's n_steps per env (SB3's default: 2048)")
    args = parser.parse_args()
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in {c.name for c in CASES}]
    if unknown:
        parser.error(f"--only: unknown case {', '.join(unknown)}; the cases are ppo, sac, dqn")
    steps = {"ppo": args.ppo_steps, "sac": args.sac_steps, "dqn": args.dqn_steps}
    print(f"this machine: {os.cpu_count() or 0} CPUs, {_versions()}", flush=True)
    summary: list[str] = []
    with tempfile.TemporaryDirectory(prefix="jax-cache-") as tmp:
        for case in CASES:
            if case.name in wanted:
                seeds = args.dqn_seeds if case.name == "dqn" else args.seeds
                if case.name == "ppo":
                    case = case._replace(hp=case.hp | {"n_steps": args.ppo_n_steps})
                summary += run_case(case, seeds, steps[case.name], args.eval_episodes,
                                    Path(tmp) if args.warm_cache else None)
    print(f"\n== summary (load after {_load()}) ==\n" + "\n".join(summary))
    return 0


def _side(s: Side) -> str:
    warm = f", warm {s.warm_steps_per_s:,.0f}" if s.warm_steps_per_s else ""
    return (f"{s.steps_per_s:,.0f} steps/s{warm} ({s.cpu_us_per_step:,.0f} us CPU/step) "
            f"return {s.final_return:.1f}")


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for name in ("stable-baselines3", "sbx-rl", "torch", "jax"):
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            parts.append(f"{name} not installed")
    return ", ".join(parts)


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


if __name__ == "__main__":
    sys.exit(main())
