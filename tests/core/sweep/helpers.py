"""Sweep files for the tests: PPO on CartPole with tiny budgets, a good and a hopeless learning rate."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.training_helpers import TEST_VEC_ENV

# runs are seeded, so a trial's curve depends only on its params: lr 0.01 learns CartPole in 1,000
# steps (eval 355-460 there), lr 1e-7 stays at ~9 (the untrained policy); at 500 steps both may read
# 9, so the pruner decides from step 1,000 on. The random sampler with seed 2 asks 0.01 twice, then
# 1e-7: a bad trial meets a completed good one (the median pruner's one start-up trial) and is cut.
SMALL_SWEEP = {
    "name": "cartpole-lr",
    "base": {"algo": "PPO", "env": "CartPole-v1", "timesteps": 2000,
             "set": {"runtime.n_envs": 1, "runtime.vec_env": TEST_VEC_ENV, "runtime.seed": 1, "runtime.telemetry_hz": 1,
                     "ppo.n_steps": 256, "ppo.batch_size": 64, "budget.eval_every": 500, "budget.eval_episodes": 3,
                     "budget.checkpoint_every": 500}},
    "space": {"ppo.learning_rate": {"choice": [0.01, 1.0e-7]}, "ppo.n_epochs": {"int": [4, 10]}},
    "objective": {"metric": "eval_mean_reward", "direction": "maximize"},
    "n_trials": 6, "parallel": 2, "pruner": "median", "pruner_options": {"n_startup_trials": 1, "n_warmup_steps": 1000},
    "sampler": "random", "seed": 2,
}


def sweep_file(folder: Path, data: dict | None = None, **changes) -> Path:
    path = Path(folder) / "sweep.yaml"
    path.write_text(yaml.safe_dump({**(data or SMALL_SWEEP), **changes}, sort_keys=False))
    return path
