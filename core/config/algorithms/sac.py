"""SAC: Soft Actor-Critic (off-policy, continuous actions, replay buffer). Defaults are SB3 2.x's own."""

from __future__ import annotations

from pydantic import field_validator

from core.config.algorithms import off_policy
from core.config.algorithms.spec import AlgoSpec
from core.config.fields import GsdeParams, hp


def check_ent_coef(v: float | str) -> float | str:
    """A number >= 0, ``auto`` or ``auto_<start>`` (SAC and its relatives learn it from there)."""
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


class SACParams(off_policy.ReplayParams, off_policy.ActionNoiseParams, GsdeParams):
    """Soft Actor-Critic (off-policy, continuous actions, replay buffer)."""

    ent_coef: float | str = hp("auto", "Entropy coefficient",
                               "A number, or 'auto' / 'auto_0.1' to learn it starting from 1.0 / 0.1.", "")
    target_update_interval: int = hp(1, "Target update interval", "Gradient steps between target-network updates.", "steps", ge=1)
    use_sde_at_warmup: bool = hp(False, "gSDE during warm-up",
                                 "Use gSDE instead of uniform random actions before learning starts.")

    _ent_coef = field_validator("ent_coef")(check_ent_coef)


SAC = AlgoSpec(
    name="SAC", params=SACParams, sb3_class="stable_baselines3:SAC", on_policy=False, network="sac",
    action_kinds=("box",), action_need="a continuous (Box) action space", net_keys=frozenset({"pi", "qf"}),
    default_net=(256, 256), default_activation="relu", train_batch=off_policy.batch_of, cycle=off_policy.train_freq_cycle,
    rules=(off_policy.replay_rules("sac"),),
    policy_keys=frozenset({"log_std_init", "use_expln", "share_features_extractor", "n_critics"}))
