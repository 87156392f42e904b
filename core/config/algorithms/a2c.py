"""A2C: Advantage Actor-Critic (on-policy, one update per rollout). Defaults are SB3 2.x's own."""

from __future__ import annotations

from core.config.algorithms.on_policy import RolloutParams
from core.config.algorithms.spec import SPACE_KINDS, AlgoSpec, rollout_cycle
from core.config.fields import (
    GsdeParams,
    Schedule,
    entropy_coef,
    gamma,
    hp,
    learning_rate,
    max_grad_norm,
    value_coef,
)


class A2CParams(RolloutParams, GsdeParams):
    """Advantage Actor-Critic (on-policy, one update per rollout)."""

    learning_rate: Schedule = learning_rate(7e-4)
    n_steps: int = hp(5, "Steps per env per rollout", "Rollout length per env before each update.", "steps", ge=1, le=1_000_000,
                      knob=True)
    gamma: float = gamma()
    gae_lambda: float = hp(1.0, "GAE lambda", "1.0 is the classic A2C return; lower trades bias for variance.", "", ge=0, le=1)
    ent_coef: float = entropy_coef()
    vf_coef: float = value_coef()
    max_grad_norm: float = max_grad_norm(0.5)
    use_rms_prop: bool = hp(True, "Use RMSprop", "RMSprop (one state tensor) instead of Adam (two).")
    rms_prop_eps: float = hp(1e-5, "RMSprop epsilon", "Numerical stabiliser of RMSprop.", "", gt=0, le=1)
    normalize_advantage: bool = hp(False, "Normalize advantage", "Standardise advantages per update.")


A2C = AlgoSpec(
    name="A2C", params=A2CParams, sb3_class="stable_baselines3:A2C", on_policy=True, network="actor_critic",
    action_kinds=SPACE_KINDS, action_need="any action space", net_keys=frozenset({"pi", "vf"}), default_net=(64, 64),
    default_activation="tanh", cycle=rollout_cycle,
    train_batch=lambda p, n_envs: p.n_steps * n_envs,  # rollout_buffer.get(batch_size=None): the whole rollout
    policy_keys=frozenset({"log_std_init", "ortho_init", "use_expln", "full_std", "squash_output", "share_features_extractor"}),
    # A2C builds its RMSprop only without optimizer_kwargs: given them, it is passed as SB3 would build it
    own_optimizer=lambda p, kw: ("rmsprop", {"alpha": 0.99, "eps": p.rms_prop_eps, **kw}) if p.use_rms_prop else None)
