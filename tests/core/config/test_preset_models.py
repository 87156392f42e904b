"""Every built-in preset x every algorithm it covers builds a real SB3 model (CPU).

Proves the presets are real constructor arguments, not numbers SB3 would reject.
"""

from __future__ import annotations

import pytest

from core.config.presets import list_presets, resolve
from core.config.trust import code_modules

ENV_FOR = {"PPO": "CartPole-v1", "A2C": "CartPole-v1", "DQN": "CartPole-v1", "SAC": "Pendulum-v1", "TD3": "Pendulum-v1",
           "DDPG": "Pendulum-v1"}
CASES = [(p.name, algo) for p in list_presets()
                 if p.builtin and not code_modules(p.data) for algo in p.algos]  # own code: test_measured_network


@pytest.mark.parametrize(("preset", "algo"), CASES, ids=[f"{p}-{a}" for p, a in CASES])
def test_preset_builds_real_model(preset, algo):
    from core.worker.factory import build_model, build_vec_env, model_kwargs

    cfg = resolve(preset, {"algo": algo, "env": {"id": ENV_FOR[algo]}}).config
    # the same n_envs (rollout shapes), but envs in-process: 64 subprocesses would only test the OS
    env, _ = build_vec_env(cfg, force_dummy=True)
    try:
        model = build_model(cfg, env, device="cpu")
        kwargs = model_kwargs(cfg)
        for key in ("learning_rate", "batch_size", "n_steps", "n_epochs", "buffer_size", "train_freq"):
            if key in kwargs and hasattr(model, key):
                got = getattr(model, key)
                got = got.frequency if key == "train_freq" else got
                assert got == kwargs[key], key
        arch = kwargs["policy_kwargs"]["net_arch"]
        first = arch if isinstance(arch, list) else arch.get("pi", arch.get("qf"))
        linears = [m for m in model.policy.modules() if m.__class__.__name__ == "Linear"]
        assert linears[0].out_features == first[0]
    finally:
        env.close()
