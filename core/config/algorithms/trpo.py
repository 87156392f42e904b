"""TRPO: Trust Region Policy Optimization (sb3-contrib; on-policy, any action space). A natural-gradient
policy step by conjugate gradients and a line search, then minibatch critic updates. Defaults are
sb3-contrib 2.x's own; fields shared with PPO are PPO's."""

from __future__ import annotations

from typing import Any

from core.config.algorithms.on_policy import MinibatchParams
from core.config.algorithms.ppo import PPOParams, batch_advice_for
from core.config.algorithms.spec import SPACE_KINDS, AlgoSpec, rollout_cycle
from core.config.fields import GsdeParams, Schedule, field_of, hp, learning_rate


class TRPOParams(MinibatchParams, GsdeParams):
    """Trust Region Policy Optimization (sb3-contrib; on-policy, rollout buffer)."""

    learning_rate: Schedule = learning_rate(1e-3)
    n_steps: int = field_of(PPOParams, "n_steps")
    batch_size: int = hp(128, "Critic minibatch size", "Transitions per gradient step of the value function.",
                         "transitions", ge=2, le=10_000_000, knob=True)
    gamma: float = field_of(PPOParams, "gamma")
    cg_max_steps: int = hp(15, "Conjugate gradient steps", "Most steps of the conjugate gradient solve.", "steps", ge=1, le=1000)
    cg_damping: float = hp(0.1, "Conjugate gradient damping", "Damping of the Hessian-vector product.", "", ge=0, le=100)
    line_search_shrinking_factor: float = hp(0.8, "Line search shrink", "Step-size factor per line-search try.", "",
                                             gt=0, lt=1)
    line_search_max_iter: int = hp(10, "Line search tries", "Most tries of the line search.", "", ge=1, le=1000)
    n_critic_updates: int = hp(10, "Critic updates", "Passes of the value function over each rollout.", "epochs", ge=1, le=1000)
    gae_lambda: float = field_of(PPOParams, "gae_lambda")
    normalize_advantage: bool = field_of(PPOParams, "normalize_advantage")
    target_kl: float = hp(0.01, "Target KL", "Largest KL divergence of one policy step (the trust region).", "", gt=0, le=10)
    sub_sampling_factor: int = hp(1, "Sub-sampling factor", "Use every k-th sample of the rollout for the policy step.", "",
                                  ge=1, le=1000)


def policy_batch(p: Any, n_envs: int) -> int:
    """The policy step's pass over the (sub-sampled) rollout, or the critic's minibatch, whichever is larger."""
    return int(max(p.n_steps * n_envs // p.sub_sampling_factor, min(int(p.batch_size), p.n_steps * n_envs)))


TRPO = AlgoSpec(
    name="TRPO", params=TRPOParams, sb3_class="sb3_contrib:TRPO", on_policy=True, network="trpo",
    action_kinds=SPACE_KINDS, action_need="any action space", net_keys=frozenset({"pi", "vf"}), default_net=(64, 64),
    default_activation="tanh", train_batch=policy_batch, cycle=rollout_cycle, advice=(batch_advice_for("trpo", auto=False),),
    policy_keys=frozenset({"log_std_init", "ortho_init", "use_expln", "full_std", "squash_output", "share_features_extractor"}),
    contrib=True)
