"""The fit estimate of sb3-contrib's algorithms against the real sb3-contrib objects: parameters, optimizer
state after real updates, and rollout buffers (LSTM states, action masks); ARS's perturbations."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.config.spaces import EnvSpaces, describe, has_action_masks, probe_spaces
from core.config.validate import validate_config
from core.estimate.estimate import estimate
from core.estimate.families.registry import model_shape
from tests.core.worker.masked_env import MaskedEnv

HOST = 64 << 30
MASKED = "tests.core.worker.masked_env:MaskedEnv"

CASES = {
    # learning_starts 240 of the 250 steps learned: a few real updates leave the optimizer state (200 took ~90 s)
    "tqc-default": {"algo": "TQC", "env": {"id": "Pendulum-v1"}, "tqc": {"buffer_size": 1000, "learning_starts": 240}},
    "tqc-sde-7-quantiles-3-critics": {"algo": "TQC", "env": {"id": "Pendulum-v1"}, "policy": {"n_critics": 3, "net_arch": [64]},
                                      "tqc": {"buffer_size": 1000, "learning_starts": 50, "use_sde": True, "n_quantiles": 7}},
    "crossq-default": {"algo": "CrossQ", "env": {"id": "Pendulum-v1"}, "crossq": {"buffer_size": 1000, "learning_starts": 240}},
    "crossq-no-batch-norm": {"algo": "CrossQ", "env": {"id": "Pendulum-v1"}, "policy": {"net_arch": {"pi": [32], "qf": [64]}},
                             "crossq": {"buffer_size": 1000, "learning_starts": 50, "batch_norm": False}},
    "trpo-discrete": {"algo": "TRPO", "env": {"id": "CartPole-v1"}, "trpo": {"n_steps": 128, "batch_size": 64}},
    "trpo-box-sde": {"algo": "TRPO", "env": {"id": "Pendulum-v1"}, "trpo": {"n_steps": 128, "batch_size": 64, "use_sde": True}},
    "ars-mlp": {"algo": "ARS", "env": {"id": "CartPole-v1"}, "ars": {"n_delta": 2}},
    "ars-linear": {"algo": "ARS", "env": {"id": "Pendulum-v1"}, "ars": {"n_delta": 2, "linear_policy": True}},
    "ars-no-bias": {"algo": "ARS", "env": {"id": "Pendulum-v1"}, "ars": {"n_delta": 2, "with_bias": False}},
    "recurrent-default-2-envs": {"algo": "RecurrentPPO", "env": {"id": "CartPole-v1"}, "runtime": {"n_envs": 2},
                                 "recurrentppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1}},
    "recurrent-2-layers-no-critic-lstm": {"algo": "RecurrentPPO", "env": {"id": "Pendulum-v1"},
                                          "recurrentppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "n_lstm_layers": 2,
                                                           "enable_critic_lstm": False, "lstm_hidden_size": 32}},
    "recurrent-shared-lstm": {"algo": "RecurrentPPO", "env": {"id": "CartPole-v1"},
                              "recurrentppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "shared_lstm": True,
                                               "enable_critic_lstm": False}},
    "qrdqn-default": {"algo": "QRDQN", "env": {"id": "CartPole-v1"}, "qrdqn": {"buffer_size": 1000, "learning_starts": 50}},
    "qrdqn-7-quantiles": {"algo": "QRDQN", "env": {"id": "Acrobot-v1"}, "policy": {"net_arch": [32, 16]},
                          "qrdqn": {"buffer_size": 1000, "learning_starts": 50, "n_quantiles": 7, "train_freq": 1}},
    "maskable": {"algo": "MaskablePPO", "env": {"entry_point": MASKED}, "maskableppo": {"n_steps": 64, "batch_size": 32}},
}


def spaces_of(cfg) -> EnvSpaces:
    if cfg.env.id:
        return probe_spaces(cfg.env)
    env = MaskedEnv()  # a test entry point, described here as the probe does
    return replace(describe(env.observation_space, env.action_space), action_masks=has_action_masks(env))


def optimizer_state_bytes(model) -> int:
    opts = ([model.actor.optimizer, model.critic.optimizer, getattr(model, "ent_coef_optimizer", None)]
            if hasattr(model, "actor") else [getattr(model.policy, "optimizer", None)])
    return sum(v.numel() * v.element_size() for o in opts if o is not None for st in o.state.values()
               for v in st.values() if hasattr(v, "numel"))


@pytest.mark.parametrize("case", list(CASES))
def test_contrib_estimate_matches_sb3_contrib(case):
    import torch

    from core.worker.factory import build_model, build_vec_env

    torch.set_num_threads(1)
    cfg = validate_config({**CASES[case], "budget": {"total_timesteps": 300}}).config
    env, _ = build_vec_env(cfg, force_dummy=True)
    model = build_model(cfg, env, device="cpu")
    try:
        spaces = spaces_of(cfg)
        result = estimate(cfg, spaces, None, HOST)
        real = sum(p.numel() for p in model.policy.parameters())
        real += model.log_ent_coef.numel() if getattr(model, "log_ent_coef", None) is not None else 0
        assert model_shape(cfg, spaces).param_count == result.parameter_count == real
        buffer = getattr(model, "rollout_buffer", None)  # as allocated (a training pass adds small index arrays)
        arrays = sum(v.nbytes for v in vars(buffer).values() if isinstance(v, np.ndarray)) if buffer is not None else 0
        model.learn(250)  # real updates: the optimizer state is what they leave (TRPO's steps only its critic)
        assert result.term("optimizer").bytes == optimizer_state_bytes(model)
        if cfg.spec.network == "ars":
            assert result.term("rollout_buffer") is None and result.term("replay_buffer") is None
            assert "perturbations" in result.term("activations").note and "random search" in result.term("optimizer").note
        elif cfg.spec.on_policy:  # every array of the rollout buffer, LSTM states and masks included
            assert result.term("rollout_buffer").bytes == arrays
    finally:
        model.env.close()


def test_contrib_estimate_names_what_it_adds():
    tqc = validate_config({"algo": "TQC", "env": {"id": "Pendulum-v1"}}).config
    base = validate_config({"algo": "SAC", "env": {"id": "Pendulum-v1"}}).config
    spaces = probe_spaces(tqc.env)
    # the same SAC networks, each critic (and its target) ending in 25 quantiles instead of 1 Q-value
    assert model_shape(tqc, spaces).param_count - model_shape(base, spaces).param_count == 2 * 2 * (256 * 24 + 24)
    lstm = validate_config({"algo": "RecurrentPPO"}).config
    assert "LSTM states" in estimate(lstm, probe_spaces(lstm.env), None, HOST).term("rollout_buffer").note
    mask = validate_config({"algo": "MaskablePPO", "env": {"entry_point": MASKED}}).config
    assert "action masks" in estimate(mask, spaces_of(mask), None, HOST).term("rollout_buffer").note


def test_every_network_family_is_named_in_the_closed_type():
    from typing import get_args

    from core.config.algorithms.registry import ALGORITHMS
    from core.config.algorithms.spec import Network
    from core.estimate.families.registry import FAMILIES

    assert set(get_args(Network)) == set(FAMILIES)  # AlgoSpec.network is one of the families, checked by mypy
    assert {spec.network for spec in ALGORITHMS.values()} == set(FAMILIES)
