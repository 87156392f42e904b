"""MaskablePPO: PPO that never samples an invalid action (sb3-contrib; on-policy, discrete actions).
The env says which actions are valid through an ``action_masks()`` method. Defaults are
sb3-contrib 2.x's own; fields shared with PPO and RecurrentPPO are theirs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from core.config.algorithms.on_policy import MinibatchParams
from core.config.algorithms.ppo import PPOParams, batch_advice_for, batch_rule_for, check_batch_size, resolve_auto_batch
from core.config.algorithms.recurrent_ppo import RecurrentPPOParams
from core.config.algorithms.spec import AlgoSpec, rollout_cycle
from core.config.fields import Schedule, field_of


class MaskablePPOParams(MinibatchParams):
    """PPO with invalid-action masking (sb3-contrib; on-policy, rollout buffer with masks)."""

    learning_rate: Schedule = field_of(PPOParams, "learning_rate")
    n_steps: int = field_of(PPOParams, "n_steps")
    batch_size: int | Literal["auto"] = field_of(PPOParams, "batch_size")
    auto_batch_cap: int = field_of(PPOParams, "auto_batch_cap")
    n_epochs: int = field_of(PPOParams, "n_epochs")
    gamma: float = field_of(PPOParams, "gamma")
    gae_lambda: float = field_of(PPOParams, "gae_lambda")
    clip_range: Schedule = field_of(PPOParams, "clip_range")
    clip_range_vf: float | None = field_of(RecurrentPPOParams, "clip_range_vf")
    normalize_advantage: bool = field_of(PPOParams, "normalize_advantage")
    ent_coef: float = field_of(PPOParams, "ent_coef")
    vf_coef: float = field_of(PPOParams, "vf_coef")
    max_grad_norm: float = field_of(PPOParams, "max_grad_norm")
    target_kl: float | None = field_of(PPOParams, "target_kl")

    _batch_size = field_validator("batch_size")(check_batch_size)


def minibatch(p: Any, n_envs: int) -> int:
    return int(min(int(p.batch_size), p.n_steps * n_envs))


MASKABLE_PPO = AlgoSpec(
    name="MaskablePPO", params=MaskablePPOParams, sb3_class="sb3_contrib:MaskablePPO", on_policy=True,
    network="maskable_ppo", action_kinds=("discrete", "multidiscrete", "multibinary"),
    action_need="a discrete action space (Discrete, MultiDiscrete or MultiBinary)", net_keys=frozenset({"pi", "vf"}),
    default_net=(64, 64), default_activation="tanh", train_batch=minibatch, cycle=rollout_cycle,
    rules=(batch_rule_for("maskableppo"),), resolve=resolve_auto_batch, advice=(batch_advice_for("maskableppo"),),
    batch_divides_rollout=True,
    policy_keys=frozenset({"ortho_init", "share_features_extractor"}), contrib=True, needs_action_masks=True,
    zoo="ppo_mask")
