"""TD3: Twin Delayed DDPG (off-policy, continuous actions, replay buffer). Defaults are SB3 2.x's own."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from core.config.algorithms import off_policy
from core.config.algorithms.spec import AlgoSpec
from core.config.fields import Schedule, Section, gamma, hp, learning_rate


class TD3Params(Section):
    """Twin Delayed DDPG (off-policy, continuous actions, replay buffer)."""

    learning_rate: Schedule = learning_rate(1e-3)
    buffer_size: int = off_policy.buffer_size()
    learning_starts: int = off_policy.learning_starts()
    batch_size: int = hp(256, "Batch size", "Transitions sampled per gradient step.", "transitions", ge=1, le=10_000_000)
    tau: float = hp(0.005, "Soft update (tau)", "Polyak coefficient of the target networks.", "", ge=0, le=1)
    gamma: float = gamma()
    train_freq: int = off_policy.train_freq(1)
    train_freq_unit: Literal[off_policy.TRAIN_FREQ_UNITS] = off_policy.train_freq_unit()  # type: ignore[valid-type]
    gradient_steps: int = off_policy.gradient_steps()
    policy_delay: int = hp(2, "Policy delay", "Critic updates per actor (and target) update.", "updates", ge=1, le=1000)
    target_policy_noise: float = hp(0.2, "Target policy noise", "Std of the noise added to target actions (smoothing).",
                                    "", ge=0, le=10)
    target_noise_clip: float = hp(0.5, "Target noise clip", "Limit of the target-action noise.", "", ge=0, le=10)
    action_noise: Literal[off_policy.NOISE_KINDS] = off_policy.action_noise()  # type: ignore[valid-type]
    action_noise_std: float = off_policy.action_noise_std()
    replay_buffer: Literal[off_policy.REPLAY_BUFFERS] = off_policy.replay_buffer()  # type: ignore[valid-type]
    her_n_sampled_goal: int = off_policy.her_n_sampled_goal()
    her_goal_selection_strategy: Literal[off_policy.HER_STRATEGIES] = off_policy.her_goal_selection_strategy()  # type: ignore[valid-type]
    optimize_memory_usage: bool = off_policy.optimize_memory_usage()

    _gradient_steps = field_validator("gradient_steps")(off_policy.check_gradient_steps)


TD3 = AlgoSpec(
    name="TD3", params=TD3Params, sb3_class="stable_baselines3:TD3", on_policy=False, network="td3",
    action_kinds=("box",), action_need="a continuous (Box) action space", net_keys=frozenset({"pi", "qf"}),
    default_net=(400, 300), default_cnn_net=(256, 256), default_activation="relu", train_batch=off_policy.batch_of,
    cycle=off_policy.train_freq_cycle,
    rules=(off_policy.replay_rules("td3"),), policy_keys=frozenset({"share_features_extractor", "n_critics"}))
