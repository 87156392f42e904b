"""rlpanel's SBX PPO compiles its update once where SBX's compiles it twice, and trains the very same network."""

from __future__ import annotations

import logging

import pytest

from core.config.validate import validate_config

pytestmark = pytest.mark.training


def _train(cls_name: str, caplog):
    """Two update cycles (the second is where SBX's class compiled again) of a tiny PPO on CartPole, with a decaying
    learning rate; the trained parameters and how often the update was compiled (jax's own log of its compiles)."""
    import jax
    import sbx

    from core.training.factory import build_model, build_vec_env
    from core.training.sbx_classes import PPO

    cfg = validate_config({"algo": "PPO", "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 2,
                                                   "learning_rate": "lin_0.001"},
                           "policy": {"net_arch": [8]}, "runtime": {"engine": "sbx", "seed": 5, "n_envs": 2}}).config
    env, _ = build_vec_env(cfg, force_dummy=True)
    model = build_model(cfg, env, device="cpu")
    cls = PPO if cls_name == "rlpanel" else sbx.PPO
    assert type(model) is PPO  # the worker's factory builds rlpanel's
    if cls is not PPO:
        model = sbx.PPO("MlpPolicy", env, **{k: getattr(model, k) for k in ("n_steps", "batch_size", "n_epochs", "seed")},
                        learning_rate=model.learning_rate, policy_kwargs=model.policy_kwargs, device="cpu")
    jax.clear_caches()  # what an earlier test compiled in this process
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jax"), jax.log_compiles():
        model.learn(128)
    compiles = sum("Compiling jit(_one_update)" in r.getMessage() for r in caplog.records)
    return jax.tree_util.tree_leaves(model.policy.actor_state.params), compiles


def test_rlpanels_ppo_compiles_its_update_once_and_learns_what_sbxs_learns(caplog):
    ours, our_programs = _train("rlpanel", caplog)
    theirs, their_programs = _train("sbx", caplog)
    assert our_programs == 1
    assert their_programs == 2  # SBX's own: a weak-typed rate first, the update's strong one after
    assert all((a == b).all() for a, b in zip(ours, theirs, strict=True))
