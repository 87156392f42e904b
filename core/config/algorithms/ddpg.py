"""DDPG: Deep Deterministic Policy Gradient (off-policy, continuous actions). SB3 builds it as TD3 with
one critic, no policy delay and no target-policy noise. Defaults are SB3 2.x's own."""

from __future__ import annotations

from core.config.algorithms import off_policy
from core.config.algorithms.spec import AlgoSpec
from core.config.fields import Schedule, learning_rate


class DDPGParams(off_policy.ReplayParams, off_policy.ActionNoiseParams):
    """Deep Deterministic Policy Gradient (off-policy, continuous actions, replay buffer)."""

    learning_rate: Schedule = learning_rate(1e-3)


DDPG = AlgoSpec(
    name="DDPG", params=DDPGParams, sb3_class="stable_baselines3:DDPG", on_policy=False, network="td3",
    action_kinds=("box",), action_need="a continuous (Box) action space", net_keys=frozenset({"pi", "qf"}),
    default_net=(400, 300), default_cnn_net=(256, 256), default_activation="relu", train_batch=off_policy.batch_of,
    cycle=off_policy.train_freq_cycle,
    rules=(off_policy.replay_rules("ddpg"),), policy_keys=frozenset({"share_features_extractor", "n_critics"}),
    default_critics=1)
