"""CrossQ (sb3-contrib; off-policy, continuous actions): SAC without target networks, whose critics
batch-renormalise the current and next transitions in one joint pass. Defaults are sb3-contrib
2.x's own; fields shared with SAC and TD3 are theirs."""

from __future__ import annotations

from pydantic import field_validator

from core.config.algorithms import off_policy
from core.config.algorithms.sac import SACParams, check_ent_coef
from core.config.algorithms.spec import AlgoSpec
from core.config.algorithms.td3 import TD3Params
from core.config.fields import GsdeParams, Schedule, field_of, hp, learning_rate


class CrossQParams(off_policy.OffPolicyParams, off_policy.ActionNoiseParams, GsdeParams):
    """CrossQ (sb3-contrib; SAC with batch-renormalised critics and no target networks)."""

    learning_rate: Schedule = learning_rate(1e-3)
    ent_coef: float | str = field_of(SACParams, "ent_coef")
    policy_delay: int = field_of(TD3Params, "policy_delay", 3, "Critic updates per actor update.")
    use_sde_at_warmup: bool = field_of(SACParams, "use_sde_at_warmup")
    batch_norm: bool = hp(True, "Batch renormalization", "BatchRenorm layers in the actor and critics (policy_kwargs).",
                          sb3="policy")
    batch_norm_momentum: float = hp(0.01, "Batch norm momentum", "Rate at which the running statistics follow the batches.",
                                    "", gt=0, le=1, sb3="policy")
    batch_norm_eps: float = hp(0.001, "Batch norm epsilon", "Added to the variance before dividing by it.", "", gt=0, le=1,
                               sb3="policy")
    renorm_warmup_steps: int = hp(100_000, "Renorm warm-up", "Gradient steps before the running statistics are used.",
                                  "steps", ge=0, le=10**9, sb3="policy")

    _ent_coef = field_validator("ent_coef")(check_ent_coef)


CROSSQ = AlgoSpec(
    name="CrossQ", params=CrossQParams, sb3_class="sb3_contrib:CrossQ", on_policy=False, network="crossq",
    action_kinds=("box",), action_need="a continuous (Box) action space", net_keys=frozenset({"pi", "qf"}),
    default_net=(256, 256), default_nets=(("qf", (1024, 1024)),), default_activation="relu",
    train_batch=off_policy.batch_of, cycle=off_policy.train_freq_cycle, rules=(off_policy.replay_rules("crossq"),),
    policy_keys=frozenset({"log_std_init", "use_expln", "share_features_extractor", "n_critics"}),
    contrib=True, policy_kinds=("MlpPolicy",))
