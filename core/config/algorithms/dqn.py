"""DQN: Deep Q-Network (off-policy, discrete actions, replay buffer). Defaults are SB3 2.x's own."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from core.config.algorithms import off_policy
from core.config.algorithms.spec import AlgoSpec
from core.config.fields import Schedule, Section, gamma, hp, learning_rate, max_grad_norm


class DQNParams(Section):
    """Deep Q-Network (off-policy, discrete actions, replay buffer)."""

    learning_rate: Schedule = learning_rate(1e-4)
    buffer_size: int = off_policy.buffer_size()
    learning_starts: int = off_policy.learning_starts()
    batch_size: int = hp(32, "Batch size", "Transitions sampled per gradient step.", "transitions", ge=1, le=10_000_000)
    tau: float = hp(1.0, "Soft update (tau)", "1.0 copies the Q-network into the target (hard update).", "", ge=0, le=1)
    gamma: float = gamma()
    train_freq: int = off_policy.train_freq(4)
    train_freq_unit: Literal[off_policy.TRAIN_FREQ_UNITS] = off_policy.train_freq_unit()  # type: ignore[valid-type]
    gradient_steps: int = off_policy.gradient_steps()
    target_update_interval: int = hp(10_000, "Target update interval", "Env steps between target-network updates.", "steps", ge=1)
    exploration_fraction: float = hp(0.1, "Exploration fraction",
                                     "Share of the budget over which epsilon decays.", "", ge=0, le=1)
    exploration_initial_eps: float = hp(1.0, "Initial epsilon", "Probability of a random action at the start.", "", ge=0, le=1)
    exploration_final_eps: float = hp(0.05, "Final epsilon", "Probability of a random action after the decay.", "", ge=0, le=1)
    max_grad_norm: float = max_grad_norm(10.0)
    replay_buffer: Literal[off_policy.REPLAY_BUFFERS] = off_policy.replay_buffer()  # type: ignore[valid-type]
    her_n_sampled_goal: int = off_policy.her_n_sampled_goal()
    her_goal_selection_strategy: Literal[off_policy.HER_STRATEGIES] = off_policy.her_goal_selection_strategy()  # type: ignore[valid-type]
    optimize_memory_usage: bool = off_policy.optimize_memory_usage()

    _gradient_steps = field_validator("gradient_steps")(off_policy.check_gradient_steps)


DQN = AlgoSpec(
    name="DQN", params=DQNParams, sb3_class="stable_baselines3:DQN", on_policy=False, network="q_network",
    action_kinds=("discrete",), action_need="a Discrete action space", net_keys=frozenset(), default_net=(64, 64),
    default_activation="relu", train_batch=off_policy.batch_of,
    cycle=off_policy.train_freq_cycle, rules=(off_policy.replay_rules("dqn"),))
