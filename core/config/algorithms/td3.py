"""TD3: Twin Delayed DDPG (off-policy, continuous actions, replay buffer). Defaults are SB3 2.x's own."""

from __future__ import annotations

from core.config.algorithms import off_policy
from core.config.algorithms.spec import AlgoSpec
from core.config.fields import Schedule, hp, learning_rate


class TD3Params(off_policy.ReplayParams, off_policy.ActionNoiseParams):
    """Twin Delayed DDPG (off-policy, continuous actions, replay buffer)."""

    learning_rate: Schedule = learning_rate(1e-3)
    policy_delay: int = hp(2, "Policy delay", "Critic updates per actor (and target) update.", "updates", ge=1, le=1000)
    target_policy_noise: float = hp(0.2, "Target policy noise", "Std of the noise added to target actions (smoothing).",
                                    "", ge=0, le=10)
    target_noise_clip: float = hp(0.5, "Target noise clip", "Limit of the target-action noise.", "", ge=0, le=10)


TD3 = AlgoSpec(
    name="TD3", params=TD3Params, sb3_class="stable_baselines3:TD3", on_policy=False, network="td3",
    action_kinds=("box",), action_need="a continuous (Box) action space", net_keys=frozenset({"pi", "qf"}),
    default_net=(400, 300), default_cnn_net=(256, 256), default_activation="relu", train_batch=off_policy.batch_of,
    cycle=off_policy.train_freq_cycle,
    rules=(off_policy.replay_rules("td3"),), policy_keys=frozenset({"share_features_extractor", "n_critics"}))
