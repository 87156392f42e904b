"""PPO: Proximal Policy Optimization (on-policy, rollout buffer). Defaults are SB3 2.x's own."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from core.config.algorithms.on_policy import MinibatchParams
from core.config.algorithms.spec import SPACE_KINDS, AlgoSpec, rollout_cycle
from core.config.errors import FieldHint, FieldIssue
from core.config.fields import (
    GsdeParams,
    Schedule,
    entropy_coef,
    gamma,
    hp,
    learning_rate,
    max_grad_norm,
    schedule_hp,
    value_coef,
)


def check_batch_size(v: int | str) -> int | str:
    if isinstance(v, int) and not 2 <= v <= 10_000_000:
        raise ValueError(f"batch_size {v} is out of range: use 2 to 10,000,000 or 'auto'")
    return v


class PPOParams(MinibatchParams, GsdeParams):
    """Proximal Policy Optimization (on-policy, rollout buffer)."""

    learning_rate: Schedule = learning_rate(3e-4)
    auto_batch_cap: int = hp(4096, "Auto batch cap", "Upper bound for batch_size: auto.", "transitions", ge=2, le=1_000_000,
                        sb3="none")
    n_epochs: int = hp(10, "Epochs per rollout", "Passes over each rollout during the update.", "epochs", ge=1, le=1000)
    gamma: float = gamma()
    gae_lambda: float = hp(0.95, "GAE lambda", "Bias/variance trade-off of the advantage estimate.", "", ge=0, le=1)
    clip_range: Schedule = schedule_hp(0.2, "Clip range", "How far the new policy may move from the old one per update.", 0, 10)
    ent_coef: float = entropy_coef()
    vf_coef: float = value_coef()
    max_grad_norm: float = max_grad_norm(0.5)
    target_kl: float | None = hp(None, "Target KL",
                                 "Stop the epoch loop early when the KL divergence exceeds this (empty: never).", "", gt=0, le=10)
    normalize_advantage: bool = hp(True, "Normalize advantage", "Standardise advantages per minibatch.")

    _batch_size = field_validator("batch_size")(check_batch_size)


def largest_divisor(n: int, cap: int) -> int:
    """The largest divisor of ``n`` that is at least 2 and at most ``cap`` (or ``n`` if none)."""
    for d in range(min(cap, n), 1, -1):
        if n % d == 0:
            return d
    return n


def batch_rule_for(section: str) -> Any:
    """A rollout must hold two samples (PPO, MaskablePPO); ``batch_size: auto`` is resolved by ``resolve_auto_batch``."""

    def batch_rule(p: Any, runtime: Any, budget: Any) -> list[FieldIssue]:
        if runtime.n_envs * p.n_steps < 2:
            return [FieldIssue(f"{section}.n_steps", "n_envs x n_steps = 1 leaves nothing to batch: use n_steps >= 2")]
        return []

    return batch_rule


def resolve_auto_batch(p: Any, runtime: Any) -> Any:
    """The section with ``batch_size: auto`` as the largest divisor of the rollout up to ``auto_batch_cap``: a new
    model, ``p`` itself when there is nothing to resolve (PPO, MaskablePPO; ``AlgoSpec.resolve``)."""
    if p.batch_size != "auto":
        return p
    return p.model_copy(update={"batch_size": largest_divisor(runtime.n_envs * p.n_steps, p.auto_batch_cap)})


def batch_advice_for(section: str, auto: bool = True) -> Any:
    """What SB3's PPO warns about: a minibatch that does not divide the rollout (the last one
    is truncated) or is larger than it (one minibatch of the whole rollout)."""

    def batch_advice(p: Any, runtime: Any, budget: Any) -> list[FieldHint]:
        n_envs = runtime.n_envs
        rollout = n_envs * p.n_steps
        if rollout < 2 or not isinstance(p.batch_size, int):
            return []
        sizes = f"n_envs x n_steps = {n_envs} x {p.n_steps} = {rollout}"
        path = f"{section}.batch_size"
        if p.batch_size > rollout:
            return [FieldHint(path, f"batch_size {p.batch_size} exceeds the rollout ({sizes}): SB3 trains on "
                                    f"one minibatch of {rollout}; use {rollout}", rollout)]
        if rollout % p.batch_size:
            best = largest_divisor(rollout, p.batch_size)
            return [FieldHint(path, f"batch_size {p.batch_size} does not divide {sizes}: SB3 trains each epoch's "
                                    f"last minibatch on {rollout % p.batch_size} samples; use {best} (the largest "
                                    "divisor below it)" + (" or 'auto'" if auto else ""), best)]
        return []

    return batch_advice


batch_rule = batch_rule_for("ppo")
batch_advice = batch_advice_for("ppo")


PPO = AlgoSpec(
    name="PPO", params=PPOParams, sb3_class="stable_baselines3:PPO", on_policy=True, network="actor_critic",
    action_kinds=SPACE_KINDS, action_need="any action space", net_keys=frozenset({"pi", "vf"}), default_net=(64, 64),
    default_activation="tanh", train_batch=lambda p, n_envs: min(int(p.batch_size), p.n_steps * n_envs), cycle=rollout_cycle,
    rules=(batch_rule,), advice=(batch_advice,), resolve=resolve_auto_batch,
    batch_divides_rollout=True,
    policy_keys=frozenset({"log_std_init", "ortho_init", "use_expln", "full_std", "squash_output", "share_features_extractor"}))
