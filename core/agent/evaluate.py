"""``python -m core.agent.evaluate RUN [--checkpoint last|best|STEP] [--episodes N] [--deterministic|--stochastic]``.

Plays N episodes of a checkpoint on a fresh env (``load_policy``: the run's env and wrappers, the
checkpoint's own VecNormalize statistics, frozen, rewards left raw) and counts them exactly as SB3's
``evaluate_policy(return_episode_rewards=True)`` does (sb3-contrib's masked one for MaskablePPO): the
Monitor's episode rewards and lengths, so a wrapper that ends an episode early (a lost life) is not an
episode. The env's own measures (``env.info_keys``) are read from the Monitor's record of each episode's
end and averaged per key. The result, one JSON line (``core.run.evaluations.Evaluation``), is appended to
the run's ``evaluations.jsonl``. It only reads the checkpoint's files: a run still training is not
disturbed (no lock is taken; a checkpoint is read only once it is complete).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.utils import set_random_seed

from core.agent.load import LoadedPolicy, load_policy
from core.agent.tool import tool_main, tool_parser
from core.run.evaluations import Evaluation, append_evaluation, ci95
from core.run.records import measures_of

MAX_EPISODES = 100_000


def parser() -> argparse.ArgumentParser:
    p = tool_parser("evaluate")
    p.add_argument("--episodes", type=int, default=10, help="episodes to play (default 10)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--deterministic", dest="deterministic", action="store_true", default=True,
                     help="the policy's most likely action (default)")
    how.add_argument("--stochastic", dest="deterministic", action="store_false", help="actions sampled from the policy")
    p.add_argument("--no-store", action="store_true", help="print the result, do not append it to evaluations.jsonl")
    return p


def _evaluate_function(loaded: LoadedPolicy) -> Callable[..., Any]:
    """SB3's ``evaluate_policy``, or sb3-contrib's masked one for an algorithm that takes action masks."""
    if loaded.cfg.spec is not None and loaded.cfg.spec.needs_action_masks:
        from sb3_contrib.common.maskable.evaluation import evaluate_policy as masked

        return masked
    from stable_baselines3.common.evaluation import evaluate_policy

    return evaluate_policy


def play(loaded: LoadedPolicy, episodes: int, deterministic: bool) -> tuple[list[float], list[int], dict[str, float]]:
    """The rewards and lengths of ``episodes`` episodes, as ``evaluate_policy`` counts them, and the mean of each
    of the env's measures over the episodes that reported it."""
    keys = tuple(loaded.cfg.env.info_keys)
    seen: dict[str, list[float]] = {key: [] for key in keys}

    def collect(local: dict[str, Any], _globals: dict[str, Any]) -> None:
        # evaluate_policy calls this for every env and step before it counts an episode; it counts one at a
        # ``done`` whose info holds the Monitor's "episode" (our envs are all Monitor-wrapped), so do we
        info = local["info"]
        if local["done"] and "episode" in info:
            for key, value in (measures_of(info["episode"], keys) or {}).items():
                seen[key].append(value)

    rewards, lengths = _evaluate_function(loaded)(loaded.model, loaded.env, n_eval_episodes=episodes,
                                                  deterministic=deterministic, return_episode_rewards=True,
                                                  callback=collect if keys else None, warn=False)
    measures = {key: statistics.fmean(values) for key, values in seen.items() if values}
    return [float(r) for r in rewards], [int(n) for n in lengths], measures


def evaluate(run_dir: Path, checkpoint: str = "last", episodes: int = 10, deterministic: bool = True,
             seed: int | None = None, device: str = "cpu") -> Evaluation:
    """Evaluate ``checkpoint`` of ``run_dir`` over ``episodes`` episodes (``ValueError``/``LookupError`` for bad input)."""
    if not 1 <= episodes <= MAX_EPISODES:
        raise ValueError(f"--episodes {episodes}: give a number of episodes from 1 to {MAX_EPISODES:,}, e.g. 10")
    started = time.monotonic()
    loaded = load_policy(Path(run_dir), checkpoint, n_envs=1, seed=seed, device=device)
    try:
        if loaded.cfg.runtime.seed is not None:  # random, numpy and torch: sampled (stochastic) actions repeat too
            set_random_seed(loaded.cfg.runtime.seed)
        rewards, lengths, measures = play(loaded, episodes, deterministic)
    finally:
        loaded.close()
    asked = str(checkpoint).strip().lower()
    named = "best" if asked == "best" else "last" if asked in ("last", "latest") else str(loaded.checkpoint.step)
    return Evaluation(
        run=Path(run_dir).name, checkpoint=named,
        checkpoint_step=loaded.checkpoint.step, episodes=len(rewards), deterministic=deterministic,
        seed=loaded.cfg.runtime.seed, mean_reward=float(np.mean(rewards)), std_reward=float(np.std(rewards)),
        ci95=ci95(rewards), mean_length=float(np.mean(lengths)), measures=measures, rewards=rewards, lengths=lengths,
        t=time.time(), wall_s=round(time.monotonic() - started, 3))


def work(args: argparse.Namespace) -> dict[str, Any]:
    result = evaluate(args.run_dir, args.checkpoint, args.episodes, args.deterministic, args.seed, args.device)
    if not args.no_store:
        append_evaluation(args.run_dir, result)
    return result.to_json()


if __name__ == "__main__":
    raise SystemExit(tool_main(parser(), work))
