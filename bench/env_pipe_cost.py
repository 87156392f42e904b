"""The parent's per-step work in SB3's SubprocVecEnv against the lean one, without the OS in between.

Env answers (a CartPole step's, as the env process sends it) are queued in real pipes by this
process, then each vec env's ``step_wait`` reads and stacks them; only that is timed, in CPU time
(``time.process_time``), turn about, A B, B A, ... Each round gives a ratio B/A; the median is the
verdict. This is where ``bench/env_memory.py``'s whole-tree CPU per step can differ between the
two on the parent's side (the env side sends the same bytes: both answer bare). C is the lean one with a
step time limit (``env.step_timeout_s``): its answers are waited for with ``multiprocessing.connection.wait``.

    python bench/env_pipe_cost.py [--envs 8] [--rounds 15] [--steps 2000]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import time
from typing import Any


def step_wait_cost(vec: Any, ends: list[Any], reply: tuple[Any, ...], steps: int) -> float:
    """CPU microseconds of ``step_wait`` per env step, the answers queued beforehand."""
    spent = 0.0
    for _ in range(steps):
        for end in ends:
            end.send(reply)
        t0 = time.process_time()
        vec.waiting = True
        vec.step_wait()
        spent += time.process_time() - t0
    return spent / (steps * len(ends)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    import gymnasium as gym
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from core.worker.lean_vec_env import LeanSubprocVecEnv

    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    obs, reward, _, _, info = env.step(1)
    info["TimeLimit.truncated"] = False
    reply = (obs, reward, False, info, {})

    def parent(cls: type, limit_s: float | None = None) -> tuple[Any, list[Any]]:
        """A vec env of ``cls`` over pipes whose other ends stand in for the env processes."""
        pipes = [mp.Pipe() for _ in range(args.envs)]
        vec = object.__new__(cls)
        vec.remotes = [ours for ours, _ in pipes]
        vec.num_envs, vec.observation_space = args.envs, env.observation_space
        vec.names, vec.processes = ["CartPole-v1"] * args.envs, [None] * args.envs
        if cls is LeanSubprocVecEnv:
            vec._init_replacement(args.envs, limit_s, None)
        return vec, [theirs for _, theirs in pipes]

    sides = {"A": parent(SubprocVecEnv), "B": parent(LeanSubprocVecEnv), "C": parent(LeanSubprocVecEnv, 30.0)}
    costs: dict[str, list[float]] = {"A": [], "B": [], "C": []}
    for round_ in range(args.rounds):
        for side in ("A", "B", "C") if round_ % 2 == 0 else ("C", "B", "A"):
            costs[side].append(step_wait_cost(*sides[side], reply, args.steps))
    print(f"step_wait CPU per env step, {args.envs} envs: A SubprocVecEnv {statistics.median(costs['A']):.2f} us, "
          f"B LeanSubprocVecEnv {statistics.median(costs['B']):.2f} us, C with a step time limit "
          f"{statistics.median(costs['C']):.2f} us")
    for side in ("B", "C"):
        ratios = [b / a for a, b in zip(costs["A"], costs[side], strict=True)]
        q1, q2, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
        print(f"{side}/A median of {len(ratios)} rounds: {q2:.3f} (p25-p75 {q1:.3f}-{q3:.3f})")


if __name__ == "__main__":
    main()
