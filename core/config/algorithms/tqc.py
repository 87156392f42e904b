"""TQC: Truncated Quantile Critics (sb3-contrib; off-policy, continuous actions). SAC with critics that
predict ``n_quantiles`` quantiles each and drop the top ones of the pooled target. Defaults are
sb3-contrib 2.x's own; every field it shares with SAC is SAC's."""

from __future__ import annotations

from core.config.algorithms import off_policy
from core.config.algorithms.sac import SACParams
from core.config.algorithms.spec import AlgoSpec
from core.config.errors import FieldIssue
from core.config.fields import hp


class TQCParams(SACParams):
    """Truncated Quantile Critics (sb3-contrib; SAC with distributional critics)."""

    n_quantiles: int = hp(25, "Quantiles per critic", "Quantiles each critic network predicts (policy_kwargs).", "",
                          ge=1, le=1000, sb3="policy")
    top_quantiles_to_drop_per_net: int = hp(2, "Top quantiles dropped per critic",
                                            "Quantiles dropped per critic from the pooled target (controls overestimation).",
                                            "", ge=0, le=1000)


def quantile_rule(p: TQCParams, runtime: object, budget: object) -> list[FieldIssue]:
    if p.top_quantiles_to_drop_per_net >= p.n_quantiles:
        return [FieldIssue("tqc.top_quantiles_to_drop_per_net",
                           f"top_quantiles_to_drop_per_net {p.top_quantiles_to_drop_per_net} leaves none of the "
                           f"{p.n_quantiles} quantiles per critic: use at most {p.n_quantiles - 1}")]
    return []


TQC = AlgoSpec(
    name="TQC", params=TQCParams, sb3_class="sb3_contrib:TQC", on_policy=False, network="tqc",
    action_kinds=("box",), action_need="a continuous (Box) action space", net_keys=frozenset({"pi", "qf"}),
    default_net=(256, 256), default_activation="relu", train_batch=off_policy.batch_of, cycle=off_policy.train_freq_cycle,
    rules=(off_policy.replay_rules("tqc"), quantile_rule),
    policy_keys=frozenset({"log_std_init", "use_expln", "share_features_extractor", "n_critics"}),
    contrib=True)
