"""rlpanel's SBX classes compile once what SBX's compile twice, and train the very same network."""

from __future__ import annotations

import logging

import pytest

from core.config.validate import validate_config

pytestmark = pytest.mark.training

# (config, steps: past the second update, where SBX's class compiled again, what was compiled twice there)
CASES = {
    "PPO": ({"algo": "PPO", "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 2, "learning_rate": "lin_0.001"},
             "runtime": {"n_envs": 2}}, 128, "_one_update"),
    "SAC": ({"algo": "SAC", "env": {"id": "Pendulum-v1"}, "sac": {"learning_starts": 20, "batch_size": 16}}, 40,
            "sample_action"),
}


def _train(algo: str, ours: bool, caplog):
    """A tiny run of ``algo`` with rlpanel's class or SBX's, the same seed and settings; the actor's trained parameters
    and how often the program SBX's class compiles twice was compiled (jax's own log of its compiles)."""
    import jax
    import sbx

    from core.worker.factory import build_model, build_vec_env
    from core.worker.sbx_classes import OWN

    raw, steps, program = CASES[algo]
    cfg = validate_config(raw | {"policy": {"net_arch": [8]},
                                 "runtime": {"engine": "sbx", "seed": 5} | raw.get("runtime", {})}).config
    env, _ = build_vec_env(cfg, force_dummy=True)
    model = build_model(cfg, env, device="cpu")
    assert type(model) is OWN[algo]  # the worker's factory builds rlpanel's
    if not ours:  # SBX's own class, given what the factory gave rlpanel's
        model = getattr(sbx, algo)(
            "MlpPolicy", env, seed=5, device="cpu", policy_kwargs=model.policy_kwargs,
            **{k: getattr(model, k) for k in _settings(algo)})
    jax.clear_caches()  # what an earlier test compiled in this process
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jax"), jax.log_compiles():
        model.learn(steps)
    compiles = sum(f"Compiling jit({program})" in r.getMessage() for r in caplog.records)
    return jax.tree_util.tree_leaves(model.policy.actor_state.params), compiles


def _settings(algo: str) -> tuple[str, ...]:
    if algo == "PPO":
        return "n_steps", "batch_size", "n_epochs", "learning_rate"
    return "learning_starts", "batch_size", "learning_rate"


@pytest.mark.parametrize("algo", sorted(CASES))
def test_rlpanels_class_compiles_once_what_sbxs_compiles_twice_and_learns_the_same(algo, caplog):
    ours, our_compiles = _train(algo, True, caplog)
    theirs, their_compiles = _train(algo, False, caplog)
    assert our_compiles == 1
    assert their_compiles == 2  # SBX's own: a weak-typed rate in one call, a strong one in another
    assert all((a == b).all() for a, b in zip(ours, theirs, strict=True))
