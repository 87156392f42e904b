"""What the replay-buffer algorithms (SAC, TD3, DDPG, DQN, ...) share: buffer, training-frequency,
HER and action-noise fields, and their rules.

``OffPolicyParams`` holds the settings of SB3's ``OffPolicyAlgorithm`` every table has; ``ReplayParams``
adds the target networks' tau and the replay buffer choice (HER), ``ActionNoiseParams`` the action noise
of the continuous-action ones. A table subclasses them and gives its own defaults where SB3's differ.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from core.config.algorithms.spec import LearnCycle
from core.config.errors import FieldIssue
from core.config.fields import Schedule, Section, gamma, hp, learning_rate

TRAIN_FREQ_UNITS = ("step", "episode")
REPLAY_BUFFERS = ("default", "her")
HER_STRATEGIES = ("future", "final", "episode")
NOISE_KINDS = ("none", "normal", "ornstein-uhlenbeck")


def buffer_size() -> Any:
    return hp(1_000_000, "Replay buffer size", "Transitions kept for replay (host RAM, not GPU).", "transitions",
              ge=1, le=1_000_000_000)


def learning_starts() -> Any:
    return hp(100, "Learning starts", "Steps of random play before the first update.", "steps", ge=0)


def train_freq(default: int) -> Any:
    return hp(default, "Train frequency", "Update the model every this many env steps (per env) or episodes "
                                          "(train_freq_unit).", "", ge=1, le=1_000_000, knob=True)


def train_freq_unit() -> Any:
    return hp("step", "Train frequency unit", "step: train_freq counts env steps; episode: it counts episodes.", sb3="none")


def gradient_steps() -> Any:
    return hp(1, "Gradient steps", "Gradient steps per update (-1: as many as env steps collected).", "steps",
              ge=-1, le=100_000, knob=True)


def optimize_memory_usage() -> Any:
    return hp(False, "Optimize memory usage", "Store observations once (halves the replay buffer; disables timeout handling).")


def replay_buffer() -> Any:
    return hp("default", "Replay buffer", "default, or her: Hindsight Experience Replay for goal envs "
                                          "(observations with observation, achieved_goal and desired_goal).", sb3="none")


def n_step_returns() -> Any:
    return hp(1, "N-step returns", "Transitions bootstrap from the value n steps ahead (1: the usual one-step target; "
              "SB3's NStepReplayBuffer; not with HER or a Dict observation).", "steps", ge=1, le=1000)


def her_n_sampled_goal() -> Any:
    return hp(4, "HER goals per transition", "Virtual transitions with new goals sampled per real one.", "", ge=1, le=1000,
              sb3="none")


def her_goal_selection_strategy() -> Any:
    return hp("future", "HER goal strategy", "Where new goals come from: future, final or episode states.", sb3="none")


def action_noise() -> Any:
    return hp("none", "Action noise", "Exploration noise added to actions: none, normal or ornstein-uhlenbeck.", sb3="none")


def action_noise_std() -> Any:
    return hp(0.1, "Action noise std", "Standard deviation of the action noise, per action dimension.", "", ge=0, le=100,
              sb3="none")


def batch_size(default: int) -> Any:
    return hp(default, "Batch size", "Transitions sampled per gradient step.", "transitions", ge=1, le=10_000_000, knob=True)


def tau(default: float = 0.005, help: str = "Polyak coefficient of the target networks.") -> Any:
    return hp(default, "Soft update (tau)", help, "", ge=0, le=1)


def check_gradient_steps(v: int) -> int:
    if v == 0:
        raise ValueError("gradient_steps 0 would never train: use 1 or more, or -1 for one per env step collected")
    return v


class OffPolicyParams(Section):
    """The settings of SB3's OffPolicyAlgorithm every replay-buffer table has (defaults: SAC's)."""

    learning_rate: Schedule = learning_rate(3e-4)
    buffer_size: int = buffer_size()
    learning_starts: int = learning_starts()
    batch_size: int = batch_size(256)
    gamma: float = gamma()
    train_freq: int = train_freq(1)
    train_freq_unit: Literal[TRAIN_FREQ_UNITS] = train_freq_unit()  # type: ignore[valid-type]
    gradient_steps: int = gradient_steps()
    optimize_memory_usage: bool = optimize_memory_usage()

    _gradient_steps = field_validator("gradient_steps")(check_gradient_steps)


class ReplayParams(OffPolicyParams):
    """Off-policy with target networks (tau) and a choice of replay buffer (HER): SAC, TD3, DDPG, DQN, TQC, QR-DQN."""

    tau: float = tau()
    n_steps: int = n_step_returns()
    replay_buffer: Literal[REPLAY_BUFFERS] = replay_buffer()  # type: ignore[valid-type]
    her_n_sampled_goal: int = her_n_sampled_goal()
    her_goal_selection_strategy: Literal[HER_STRATEGIES] = her_goal_selection_strategy()  # type: ignore[valid-type]


class ActionNoiseParams(Section):
    """Exploration noise on continuous actions (SAC, TD3, DDPG, TQC, CrossQ): a mixin beside ``OffPolicyParams``."""

    action_noise: Literal[NOISE_KINDS] = action_noise()  # type: ignore[valid-type]
    action_noise_std: float = action_noise_std()


def replay_rules(section: str) -> Any:
    """The buffer must hold a batch, and learning must start within the budget."""

    def rules(p: OffPolicyParams, runtime: Any, budget: Any) -> list[FieldIssue]:
        issues: list[FieldIssue] = []
        if p.buffer_size < p.batch_size:
            issues.append(FieldIssue(f"{section}.buffer_size",
                                     f"buffer_size {p.buffer_size:,} is smaller than batch_size {p.batch_size:,}: "
                                     f"raise it to at least {p.batch_size:,}"))
        if p.learning_starts >= budget.total_timesteps:
            issues.append(FieldIssue(f"{section}.learning_starts",
                                     f"learning_starts {p.learning_starts:,} is not below total_timesteps "
                                     f"{budget.total_timesteps:,}: the model would never train; lower it or raise the budget"))
        if isinstance(p, ReplayParams) and p.replay_buffer == "her" and p.optimize_memory_usage:
            issues.append(FieldIssue(f"{section}.optimize_memory_usage",
                                     "the HER replay buffer has no memory-optimised mode: turn optimize_memory_usage off"))
        if isinstance(p, ReplayParams) and p.replay_buffer == "her" and p.n_steps > 1:
            issues.append(FieldIssue(f"{section}.n_steps", f"n-step returns ({p.n_steps}) need the default replay buffer, "
                                     "not HER (SB3 would ignore them): set n_steps to 1 or replay_buffer to default"))
        return issues

    return rules


def batch_of(p: OffPolicyParams, n_envs: int) -> int:
    """Off-policy algorithms sample ``batch_size`` transitions per gradient step."""
    return int(p.batch_size)


def train_freq_cycle(p: OffPolicyParams, n_envs: int) -> LearnCycle:
    """OffPolicyAlgorithm.collect_rollouts: train_freq steps of every env per cycle, or train_freq whole episodes
    (SB3 allows episodes with one env only; how many steps they take is not known ahead)."""
    if p.train_freq_unit == "episode":
        return LearnCycle(None, f"train_freq counts episodes: each update waits for {p.train_freq:,} to end")
    return LearnCycle(n_envs * int(p.train_freq), f"whole train_freq cycles of {n_envs} x {int(p.train_freq):,}")
