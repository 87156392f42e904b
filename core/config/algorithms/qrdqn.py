"""QR-DQN: Quantile Regression DQN (sb3-contrib; off-policy, discrete actions). DQN whose Q-network predicts
``n_quantiles`` quantiles of the return per action. Defaults are sb3-contrib 2.x's own; every field it shares
with DQN is DQN's."""

from __future__ import annotations

from core.config.algorithms import off_policy
from core.config.algorithms.dqn import DQNParams
from core.config.algorithms.spec import AlgoSpec
from core.config.fields import Schedule, field_of, hp, learning_rate


class QRDQNParams(off_policy.ReplayParams):
    """Quantile Regression DQN (sb3-contrib; DQN with a distributional Q-network)."""

    learning_rate: Schedule = learning_rate(5e-5)
    batch_size: int = field_of(DQNParams, "batch_size")
    tau: float = field_of(DQNParams, "tau")
    train_freq: int = field_of(DQNParams, "train_freq")
    target_update_interval: int = field_of(DQNParams, "target_update_interval")
    exploration_initial_eps: float = field_of(DQNParams, "exploration_initial_eps")
    exploration_fraction: float = field_of(DQNParams, "exploration_fraction", 0.005)
    exploration_final_eps: float = field_of(DQNParams, "exploration_final_eps", 0.01)
    max_grad_norm: float | None = hp(None, "Max gradient norm", "Gradients are clipped to this norm (empty: no clipping).",
                                     "", gt=0, le=1000)
    n_quantiles: int = hp(200, "Quantiles", "Quantiles of the return the Q-network predicts per action (policy_kwargs).",
                          "", ge=1, le=10_000, sb3="policy")


QRDQN = AlgoSpec(
    name="QRDQN", params=QRDQNParams, sb3_class="sb3_contrib:QRDQN", on_policy=False, network="qr_network",
    action_kinds=("discrete",), action_need="a Discrete action space", net_keys=frozenset(), default_net=(64, 64),
    default_activation="relu", train_batch=off_policy.batch_of, cycle=off_policy.train_freq_cycle,
    rules=(off_policy.replay_rules("qrdqn"),), contrib=True,
    # QR-DQN replaces optimizer_kwargs with its own Adam eps (0.01 / batch) unless an optimizer class is given
    own_optimizer=lambda p, kw: ("adam", {"eps": 0.01 / p.batch_size, **kw}))
