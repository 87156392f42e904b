"""Where an SBX PPO run's time goes: jax's import, sbx's, the env, the model (its init compiles), and inside ``learn()``
the rollouts and the updates, with what XLA compiled (or loaded from the persistent cache) and how long it took.

    JAX_PLATFORMS=cpu python bench/sbx_profile.py [--steps 20000] [--cache DIR] [--sbx-classes] [--explain]

PPO on CartPole-v1, 8 dummy envs, n_steps 256 (bench/engines.py's case). ``--cache DIR``: JAX's persistent compilation
cache there, as the worker sets it (``core.estimate.xla.set_jax_env``): run twice to see a warm cache. ``--sbx-classes``:
SBX's own PPO instead of rlpanel's (``core.worker.sbx_classes``). ``--explain``: jax's reasons for each retrace on
stderr. One JSON line: seconds of each part, CPU seconds of ``learn()``, and the compiles by program (count, seconds).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class Compiles(logging.Handler):
    """jax's own log of its compiles: each program's count and seconds (a cache hit is a compile of ~0 s)."""

    def __init__(self) -> None:
        super().__init__()
        self.count: Counter[str] = Counter()
        self.seconds: Counter[str] = Counter()
        self.hits = 0

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        done = re.match(r"Finished XLA compilation of jit\((\w+)\) in ([0-9.]+) sec", text)
        if done:
            self.count[done[1]] += 1
            self.seconds[done[1]] += float(done[2])
        self.hits += text.startswith("Persistent compilation cache hit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--sbx-classes", action="store_true", help="SBX's own PPO, not rlpanel's")
    parser.add_argument("--explain", action="store_true", help="jax_explain_cache_misses on stderr")
    args = parser.parse_args()
    if args.cache:
        os.environ.update(JAX_COMPILATION_CACHE_DIR=str(args.cache), JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    t = {"start": time.monotonic()}
    import jax

    t["jax"] = time.monotonic()
    jax.config.update("jax_log_compiles", True)
    jax.config.update("jax_explain_cache_misses", args.explain)
    compiles = Compiles()
    logging.getLogger("jax").addHandler(compiles)
    logging.getLogger("jax").propagate = args.explain
    import sbx
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    from core.worker.sbx_classes import PPO

    t["sbx"] = time.monotonic()
    env = make_vec_env("CartPole-v1", n_envs=8, seed=0)
    t["env"] = time.monotonic()
    cls = sbx.PPO if args.sbx_classes else PPO
    model = cls("MlpPolicy", env, n_steps=256, seed=0, device="cpu", policy_kwargs={"ortho_init": True})
    t["model"] = time.monotonic()

    class Edges(BaseCallback):
        rollout_s: float = 0.0

        def _on_rollout_start(self) -> None:
            self.began = time.monotonic()

        def _on_rollout_end(self) -> None:
            self.rollout_s += time.monotonic() - self.began

        def _on_step(self) -> bool:
            return True

    edges, cpu = Edges(), time.process_time()
    model.learn(args.steps, callback=edges)
    learn_s, learn_cpu_s = time.monotonic() - t["model"], time.process_time() - cpu
    parts = {"jax_import_s": t["jax"] - t["start"], "sbx_import_s": t["sbx"] - t["jax"], "env_s": t["env"] - t["sbx"],
             "model_s": t["model"] - t["env"], "learn_s": learn_s, "learn_cpu_s": learn_cpu_s,
             "rollouts_s": edges.rollout_s, "updates_s": learn_s - edges.rollout_s}
    print(json.dumps({k: round(v, 2) for k, v in parts.items()} | {
        "steps_per_s": round(model.num_timesteps / learn_s), "cache_hits": compiles.hits,
        "compiles": sum(compiles.count.values()), "compile_s": round(sum(compiles.seconds.values()), 2),
        "largest": {k: [compiles.count[k], round(s, 2)] for k, s in compiles.seconds.most_common(4)}}))


if __name__ == "__main__":
    main()
