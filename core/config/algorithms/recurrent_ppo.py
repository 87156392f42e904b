"""RecurrentPPO: PPO with LSTM policies (sb3-contrib; on-policy, any action space). The rollout keeps
each step's LSTM states and minibatches are whole sequences. Defaults are sb3-contrib 2.x's own;
fields shared with PPO are PPO's."""

from __future__ import annotations

from typing import Any

from core.config.algorithms.on_policy import MinibatchParams
from core.config.algorithms.ppo import PPOParams
from core.config.algorithms.spec import SPACE_KINDS, AlgoSpec, rollout_cycle
from core.config.errors import FieldIssue
from core.config.fields import GsdeParams, Schedule, field_of, hp


class RecurrentPPOParams(MinibatchParams, GsdeParams):
    """PPO with LSTM policies (sb3-contrib; on-policy, rollout buffer with hidden states)."""

    learning_rate: Schedule = field_of(PPOParams, "learning_rate")
    n_steps: int = field_of(PPOParams, "n_steps", 128)
    batch_size: int = hp(128, "Minibatch size", "Transitions per gradient step, taken as whole sequences.", "transitions",
                         ge=2, le=10_000_000, knob=True)
    n_epochs: int = field_of(PPOParams, "n_epochs")
    gamma: float = field_of(PPOParams, "gamma")
    gae_lambda: float = field_of(PPOParams, "gae_lambda")
    clip_range: Schedule = field_of(PPOParams, "clip_range")
    clip_range_vf: float | None = hp(None, "Value clip range", "Clip the value function's change per update (empty: no clip).",
                                     "", gt=0, le=1000)
    normalize_advantage: bool = field_of(PPOParams, "normalize_advantage")
    ent_coef: float = field_of(PPOParams, "ent_coef")
    vf_coef: float = field_of(PPOParams, "vf_coef")
    max_grad_norm: float = field_of(PPOParams, "max_grad_norm")
    target_kl: float | None = field_of(PPOParams, "target_kl")
    lstm_hidden_size: int = hp(256, "LSTM hidden size", "Units of each LSTM layer (policy_kwargs).", "units", ge=1, le=65536,
                               sb3="policy")
    n_lstm_layers: int = hp(1, "LSTM layers", "Stacked LSTM layers (policy_kwargs).", "layers", ge=1, le=64, sb3="policy")
    shared_lstm: bool = hp(False, "Shared LSTM", "The critic uses the actor's LSTM (policy_kwargs).", sb3="policy")
    enable_critic_lstm: bool = hp(True, "Critic LSTM", "The critic has an LSTM of its own (policy_kwargs).", sb3="policy")


def lstm_rule(p: Any, runtime: Any, budget: Any) -> list[FieldIssue]:
    """sb3-contrib's RecurrentActorCriticPolicy refuses a shared LSTM together with the critic's own."""
    if p.shared_lstm and p.enable_critic_lstm:
        return [FieldIssue("recurrentppo.enable_critic_lstm", "the critic cannot have its own LSTM and share the actor's: "
                                                              "turn enable_critic_lstm off or shared_lstm off")]
    return []


RECURRENT_PPO = AlgoSpec(
    name="RecurrentPPO", params=RecurrentPPOParams, sb3_class="sb3_contrib:RecurrentPPO", on_policy=True,
    network="recurrent", action_kinds=SPACE_KINDS, action_need="any action space", net_keys=frozenset({"pi", "vf"}),
    default_net=(64, 64), default_activation="tanh",
    train_batch=lambda p, n_envs: min(int(p.batch_size), p.n_steps * n_envs), cycle=rollout_cycle, rules=(lstm_rule,),
    policy_keys=frozenset({"log_std_init", "ortho_init", "use_expln", "full_std", "squash_output", "share_features_extractor"}),
    contrib=True, zoo="ppo_lstm",
    policy_names=(("MlpLstmPolicy", "MlpPolicy"), ("CnnLstmPolicy", "CnnPolicy"), ("MultiInputLstmPolicy", "MultiInputPolicy")))
