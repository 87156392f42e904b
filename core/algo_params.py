"""Per-algorithm hyperparameters: one pydantic field per hyperparameter.

Defaults are stable-baselines3's own (2.x). Every field carries a title, a one-line help
(``description``), a range (``ge``/``le``/``gt``) and a unit in ``json_schema_extra``; the
GUI builds its forms from these and the CLI's ``--set`` paths address them by name.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


def hp(default: Any, title: str, help: str, unit: str = "", **constraints: Any) -> Any:
    """A hyperparameter field: default, title, one-line help, unit and range."""
    return Field(default, title=title, description=help, json_schema_extra={"unit": unit}, **constraints)


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


# Shared fields, written once and reused by the algorithms that have them.
def _lr(default: float) -> Any:
    return hp(default, "Learning rate", "Step size of the optimizer.", "", gt=0, le=1)


def _gamma() -> Any:
    return hp(0.99, "Discount (gamma)", "How much future rewards count; closer to 1 looks further ahead.", "", ge=0, le=1)


class PPOParams(Section):
    """Proximal Policy Optimization (on-policy, rollout buffer)."""

    learning_rate: float = _lr(3e-4)
    n_steps: int = hp(2048, "Steps per env per rollout", "Rollout length per env; a rollout holds n_envs x n_steps transitions.", "steps", ge=1, le=1_000_000)
    batch_size: int | Literal["auto"] = hp(64, "Minibatch size", "Transitions per gradient step; must divide n_envs x n_steps ('auto' picks the largest divisor up to auto_batch_cap).", "transitions")
    auto_batch_cap: int = hp(4096, "Auto batch cap", "Upper bound for batch_size: auto.", "transitions", ge=2, le=1_000_000)
    n_epochs: int = hp(10, "Epochs per rollout", "Passes over each rollout during the update.", "epochs", ge=1, le=1000)
    gamma: float = _gamma()
    gae_lambda: float = hp(0.95, "GAE lambda", "Bias/variance trade-off of the advantage estimate.", "", ge=0, le=1)
    clip_range: float = hp(0.2, "Clip range", "How far the new policy may move from the old one per update.", "", gt=0, le=10)
    ent_coef: float = hp(0.0, "Entropy coefficient", "Weight of the entropy bonus (exploration).", "", ge=0, le=10)
    vf_coef: float = hp(0.5, "Value loss coefficient", "Weight of the value-function loss.", "", ge=0, le=10)
    max_grad_norm: float = hp(0.5, "Max gradient norm", "Gradients are clipped to this norm.", "", gt=0, le=1000)
    target_kl: float | None = hp(None, "Target KL", "Stop the epoch loop early when the KL divergence exceeds this (empty: never).", "", gt=0, le=10)
    normalize_advantage: bool = hp(True, "Normalize advantage", "Standardise advantages per minibatch.")

    @field_validator("batch_size")
    @classmethod
    def _batch_positive(cls, v: int | str) -> int | str:
        if isinstance(v, int) and not 2 <= v <= 10_000_000:
            raise ValueError(f"batch_size {v} is out of range: use 2 to 10,000,000 or 'auto'")
        return v


class A2CParams(Section):
    """Advantage Actor-Critic (on-policy, one update per rollout)."""

    learning_rate: float = _lr(7e-4)
    n_steps: int = hp(5, "Steps per env per rollout", "Rollout length per env before each update.", "steps", ge=1, le=1_000_000)
    gamma: float = _gamma()
    gae_lambda: float = hp(1.0, "GAE lambda", "1.0 is the classic A2C return; lower trades bias for variance.", "", ge=0, le=1)
    ent_coef: float = hp(0.0, "Entropy coefficient", "Weight of the entropy bonus (exploration).", "", ge=0, le=10)
    vf_coef: float = hp(0.5, "Value loss coefficient", "Weight of the value-function loss.", "", ge=0, le=10)
    max_grad_norm: float = hp(0.5, "Max gradient norm", "Gradients are clipped to this norm.", "", gt=0, le=1000)
    use_rms_prop: bool = hp(True, "Use RMSprop", "RMSprop (one state tensor) instead of Adam (two).")
    rms_prop_eps: float = hp(1e-5, "RMSprop epsilon", "Numerical stabiliser of RMSprop.", "", gt=0, le=1)
    normalize_advantage: bool = hp(False, "Normalize advantage", "Standardise advantages per update.")


class SACParams(Section):
    """Soft Actor-Critic (off-policy, continuous actions, replay buffer)."""

    learning_rate: float = _lr(3e-4)
    buffer_size: int = hp(1_000_000, "Replay buffer size", "Transitions kept for replay (host RAM, not GPU).", "transitions", ge=1, le=1_000_000_000)
    learning_starts: int = hp(100, "Learning starts", "Steps of random play before the first update.", "steps", ge=0)
    batch_size: int = hp(256, "Batch size", "Transitions sampled per gradient step.", "transitions", ge=1, le=10_000_000)
    tau: float = hp(0.005, "Soft update (tau)", "Polyak coefficient of the target networks.", "", ge=0, le=1)
    gamma: float = _gamma()
    train_freq: int = hp(1, "Train frequency", "Update the model every this many env steps (per env).", "steps", ge=1, le=1_000_000)
    gradient_steps: int = hp(1, "Gradient steps", "Gradient steps per update (-1: as many as env steps collected).", "steps", ge=-1, le=100_000)
    ent_coef: float | str = hp("auto", "Entropy coefficient", "A number, or 'auto' / 'auto_0.1' to learn it starting from 1.0 / 0.1.", "")
    target_update_interval: int = hp(1, "Target update interval", "Gradient steps between target-network updates.", "steps", ge=1)
    use_sde: bool = hp(False, "Use gSDE", "State-dependent exploration instead of Gaussian noise.")
    optimize_memory_usage: bool = hp(False, "Optimize memory usage", "Store observations once (halves the replay buffer; disables timeout handling).")

    @field_validator("ent_coef")
    @classmethod
    def _ent_coef(cls, v: float | str) -> float | str:
        if isinstance(v, str):
            if v == "auto":
                return v
            if v.startswith("auto_"):
                try:
                    if float(v[5:]) > 0:
                        return v
                except ValueError:
                    pass
            raise ValueError(f"ent_coef {v!r} is not valid: use a number >= 0, 'auto' or 'auto_<start value>' such as 'auto_0.1'")
        if v < 0:
            raise ValueError(f"ent_coef {v} must be >= 0 (or 'auto')")
        return v

    @field_validator("gradient_steps")
    @classmethod
    def _gradient_steps(cls, v: int) -> int:
        if v == 0:
            raise ValueError("gradient_steps 0 would never train: use 1 or more, or -1 for one per env step collected")
        return v


class DQNParams(Section):
    """Deep Q-Network (off-policy, discrete actions, replay buffer)."""

    learning_rate: float = _lr(1e-4)
    buffer_size: int = hp(1_000_000, "Replay buffer size", "Transitions kept for replay (host RAM, not GPU).", "transitions", ge=1, le=1_000_000_000)
    learning_starts: int = hp(100, "Learning starts", "Steps of random play before the first update.", "steps", ge=0)
    batch_size: int = hp(32, "Batch size", "Transitions sampled per gradient step.", "transitions", ge=1, le=10_000_000)
    tau: float = hp(1.0, "Soft update (tau)", "1.0 copies the Q-network into the target (hard update).", "", ge=0, le=1)
    gamma: float = _gamma()
    train_freq: int = hp(4, "Train frequency", "Update the model every this many env steps (per env).", "steps", ge=1, le=1_000_000)
    gradient_steps: int = hp(1, "Gradient steps", "Gradient steps per update (-1: as many as env steps collected).", "steps", ge=-1, le=100_000)
    target_update_interval: int = hp(10_000, "Target update interval", "Env steps between target-network updates.", "steps", ge=1)
    exploration_fraction: float = hp(0.1, "Exploration fraction", "Share of the budget over which epsilon decays.", "", ge=0, le=1)
    exploration_initial_eps: float = hp(1.0, "Initial epsilon", "Probability of a random action at the start.", "", ge=0, le=1)
    exploration_final_eps: float = hp(0.05, "Final epsilon", "Probability of a random action after the decay.", "", ge=0, le=1)
    max_grad_norm: float = hp(10.0, "Max gradient norm", "Gradients are clipped to this norm.", "", gt=0, le=1000)
    optimize_memory_usage: bool = hp(False, "Optimize memory usage", "Store observations once (halves the replay buffer; disables timeout handling).")

    @field_validator("gradient_steps")
    @classmethod
    def _gradient_steps(cls, v: int) -> int:
        if v == 0:
            raise ValueError("gradient_steps 0 would never train: use 1 or more, or -1 for one per env step collected")
        return v


ALGO_PARAMS: dict[str, type[Section]] = {"PPO": PPOParams, "A2C": A2CParams, "SAC": SACParams, "DQN": DQNParams}
ON_POLICY = ("PPO", "A2C")
OFF_POLICY = ("SAC", "DQN")
