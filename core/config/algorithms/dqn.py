"""DQN: Deep Q-Network (off-policy, discrete actions, replay buffer). Defaults are SB3 2.x's own."""

from __future__ import annotations

from core.config.algorithms import off_policy
from core.config.algorithms.spec import AlgoSpec
from core.config.fields import Schedule, hp, learning_rate, max_grad_norm


class DQNParams(off_policy.ReplayParams):
    """Deep Q-Network (off-policy, discrete actions, replay buffer)."""

    learning_rate: Schedule = learning_rate(1e-4)
    batch_size: int = off_policy.batch_size(32)
    tau: float = off_policy.tau(1.0, "1.0 copies the Q-network into the target (hard update).")
    train_freq: int = off_policy.train_freq(4)
    target_update_interval: int = hp(10_000, "Target update interval", "Env steps between target-network updates.", "steps", ge=1)
    exploration_fraction: float = hp(0.1, "Exploration fraction",
                                     "Share of the budget over which epsilon decays.", "", ge=0, le=1)
    exploration_initial_eps: float = hp(1.0, "Initial epsilon", "Probability of a random action at the start.", "", ge=0, le=1)
    exploration_final_eps: float = hp(0.05, "Final epsilon", "Probability of a random action after the decay.", "", ge=0, le=1)
    max_grad_norm: float = max_grad_norm(10.0)


DQN = AlgoSpec(
    name="DQN", params=DQNParams, sb3_class="stable_baselines3:DQN", on_policy=False, network="q_network",
    action_kinds=("discrete",), action_need="a Discrete action space", net_keys=frozenset(), default_net=(64, 64),
    default_activation="relu", train_batch=off_policy.batch_of,
    cycle=off_policy.train_freq_cycle, rules=(off_policy.replay_rules("dqn"),))
