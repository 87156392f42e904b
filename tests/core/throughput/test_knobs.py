"""The tune's moves keep what is learned where they can, and say when they cannot."""

from core.config.validate import validate_config
from core.throughput.knobs import algo_moves, learning_changes, settings_of, with_n_envs


def _settings(raw):
    return settings_of(validate_config(raw).config, "cpu")


def test_ppo_n_envs_keeps_the_rollout_and_says_when_it_cannot():
    user = _settings({"algo": "PPO", "ppo": {"n_steps": 2048, "batch_size": 64}})
    eight = with_n_envs(user, 8)
    assert eight["ppo.n_steps"] == 256 and eight["runtime.n_envs"] == 8
    assert learning_changes(eight, user) == []
    odd = with_n_envs(_settings({"algo": "PPO", "ppo": {"n_steps": 6, "batch_size": 6}}), 4)  # 6 envs-steps do not split in 4
    assert odd["ppo.n_steps"] == 6 and 24 % odd["ppo.batch_size"] == 0
    assert learning_changes(odd, _settings({"algo": "PPO", "ppo": {"n_steps": 6, "batch_size": 6}})) == ["rollout 6 -> 24"]


def test_off_policy_n_envs_keeps_gradient_steps_per_env_step():
    user = _settings({"algo": "SAC", "env": {"id": "Pendulum-v1"}, "sac": {"train_freq": 1, "gradient_steps": 1}})
    four = with_n_envs(user, 4)
    assert (four["sac.train_freq"], four["sac.gradient_steps"]) == (1, 4)
    assert learning_changes(four, user) == []
    halved = with_n_envs(four, 2)
    assert learning_changes(halved, user) == []


def test_batch_and_rollout_moves_change_learning_train_freq_moves_do_not():
    ppo = _settings({"algo": "PPO", "ppo": {"n_steps": 256, "batch_size": 64}})
    moves = dict(algo_moves(ppo))
    assert moves["batch_size up"]["ppo.batch_size"] == 128
    assert learning_changes(moves["batch_size up"], ppo) == ["batch_size 64 -> 128"]
    assert learning_changes(moves["n_steps down"], ppo) == ["rollout 256 -> 128"]
    dqn = _settings({"algo": "DQN", "dqn": {"train_freq": 4, "gradient_steps": 1}})
    moves = dict(algo_moves(dqn))
    assert "train_freq down" not in moves  # gradient_steps 1 cannot halve: the ratio would change
    up = moves["train_freq up"]
    assert (up["dqn.train_freq"], up["dqn.gradient_steps"]) == (8, 2)
    assert learning_changes(up, dqn) == []
