"""sb3-contrib's QR-DQN: a real worker trains it to finished on CartPole, and its settings (the quantiles in
policy_kwargs, its own defaults) reach the sb3-contrib object."""

from __future__ import annotations

import pytest

from core.config.validate import validate_config
from core.launch.control import launch_worker
from core.run.status import read_status
from tests.training_helpers import last_step, make_run, records

pytestmark = pytest.mark.training

RAW = {"algo": "QRDQN", "env": {"id": "CartPole-v1"}, "runtime": {"torch_threads": 1},
       "budget": {"total_timesteps": 400, "checkpoint_every": 200},
       "qrdqn": {"learning_starts": 100, "batch_size": 32, "buffer_size": 2000, "n_quantiles": 5, "train_freq": 4},
       "policy": {"net_arch": [32]}}


@pytest.mark.timeout(600)
def test_qrdqn_trains_to_finished_in_a_real_worker(runs_dir):
    run = make_run(runs_dir, RAW)
    proc = launch_worker(run, reap=False)
    assert proc.wait(500) == 0, (run / "worker.log").read_text()
    status = read_status(run)
    assert status.state == "finished", (status.error, (run / "worker.log").read_text()[-3000:])
    assert last_step(run) >= 400
    assert records(run, "episode")
    assert any("train/loss" in r for r in records(run, "train")), records(run, "train")[-1:]


def test_qrdqn_settings_reach_the_sb3_contrib_object():
    from core.worker.factory import build_model, build_vec_env

    cfg = validate_config({**RAW, "qrdqn": {**RAW["qrdqn"], "max_grad_norm": 5.0, "exploration_fraction": 0.3}}).config
    env, _ = build_vec_env(cfg, force_dummy=True)
    model = build_model(cfg, env, device="cpu")
    try:
        assert type(model).__name__ == "QRDQN" and model.policy.n_quantiles == 5
        assert model.quantile_net.quantile_net[-1].out_features == 2 * 5  # n_actions x n_quantiles
        assert (model.max_grad_norm, model.exploration_fraction, model.batch_size) == (5.0, 0.3, 32)
    finally:
        env.close()
    default = validate_config({"algo": "QRDQN"}).config.qrdqn  # sb3-contrib's own defaults, not DQN's
    assert (default.learning_rate, default.exploration_final_eps, default.max_grad_norm, default.n_quantiles) == (
        5e-5, 0.01, None, 200)


@pytest.mark.parametrize(("policy", "expected"), [
    ({}, {"eps": 0.01 / 32}),  # nothing given: QR-DQN's own Adam eps (0.01 / batch)
    ({"optimizer_eps": 1e-5, "weight_decay": 1e-4}, {"eps": 1e-5, "weight_decay": 1e-4}),  # the user's, not dropped
    ({"weight_decay": 1e-4}, {"eps": 0.01 / 32, "weight_decay": 1e-4}),  # its eps kept beside the user's decay
])
def test_qrdqn_keeps_the_users_optimizer_settings(policy, expected):
    from core.worker.factory import build_model, build_vec_env

    cfg = validate_config({**RAW, "policy": {**RAW["policy"], **policy}}).config
    env, _ = build_vec_env(cfg, force_dummy=True)
    try:
        group = build_model(cfg, env, device="cpu").policy.optimizer.param_groups[0]
    finally:
        env.close()
    assert {key: group[key] for key in expected} == pytest.approx(expected)
    assert group["weight_decay"] == expected.get("weight_decay", 0)


def test_n_step_returns_reach_the_replay_buffer():
    from stable_baselines3.common.buffers import NStepReplayBuffer

    from core.worker.factory import build_model, build_vec_env

    cfg = validate_config({**RAW, "qrdqn": {**RAW["qrdqn"], "n_steps": 3}}).config
    env, _ = build_vec_env(cfg, force_dummy=True)
    try:
        model = build_model(cfg, env, device="cpu")
    finally:
        env.close()
    assert model.n_steps == 3 and isinstance(model.replay_buffer, NStepReplayBuffer)
    assert model.replay_buffer.n_steps == 3


def test_n_step_returns_with_her_are_refused_naming_the_field():
    from core.config.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        validate_config({"algo": "DQN", "dqn": {"n_steps": 3, "replay_buffer": "her"}})
    assert "dqn.n_steps" in str(err.value) and "set n_steps to 1" in str(err.value)
