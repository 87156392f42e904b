"""SB3's ``ActorCriticPolicy`` (PPO, A2C), counted without torch (read from SB3 2.x, not guessed).

A FlattenExtractor (no parameters, shared; with CnnPolicy a NatureCNN, shared unless
``share_features_extractor`` is off), ``MlpExtractor`` pi and vf stacks, ``action_net``
Linear(latent_pi, logits), ``value_net`` Linear(latent_vf, 1), and for Box actions a ``log_std``
parameter of ``action_dim`` (gSDE: a (latent, action_dim) matrix, or (latent, 1) without
``full_std``). One optimizer over everything: Adam (PPO; A2C with ``use_rms_prop: false``) or
RMSprop(alpha=0.99, eps, momentum 0, not centered: one ``square_avg`` per parameter) for A2C.
The rollout buffer is sampled in minibatches of ``train_batch`` rows.
"""

from __future__ import annotations

from core.config.algorithms.on_policy import RolloutParams
from core.config.schema import RunConfig, section_as, uses_sde
from core.config.spaces import EnvSpaces
from core.estimate.families.family import GradientFamily, PolicyInputs, observation_bytes, policy_inputs, stack_graph_floats
from core.estimate.networks import FLOAT, ModelShape, Optimizer, network


class ActorCritic(GradientFamily):
    """PPO and A2C: pi and vf stacks with their heads, one optimizer."""

    network = "actor_critic"

    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        inputs = policy_inputs(cfg, spaces)
        return self.actor_critic(cfg, spaces, inputs, inputs.features)

    def actor_critic(self, cfg: RunConfig, spaces: EnvSpaces, inputs: PolicyInputs, feats: int) -> ModelShape:
        """The pi and vf stacks on ``feats`` inputs (RecurrentPPO: the LSTM's output) with their heads;
        the CNN once (shared) or twice."""
        arch, cnn = inputs.arch, inputs.cnn
        pi, vf = tuple(arch.get("pi", [])), tuple(arch.get("vf", []))
        share = cfg.policy.share_features_extractor is not False
        box = spaces.action_kind == "box"
        latent = pi[-1] if pi else feats
        log_std = 0
        if box:  # gSDE: a (latent, action_dim) matrix (full_std) or (latent, 1); else one per action
            log_std = (latent * (spaces.action_dim if cfg.policy.full_std else 1) if uses_sde(cfg)
                       else spaces.action_dim)
        cnn_params, cnn_tensors = (cnn.params, cnn.tensors) if cnn else (0, 0)
        # the mlp_extractor's pi stack and the action head are one chain for activations
        actor = network("actor", [(feats, *pi, spaces.action_logits)], extra_params=log_std + cnn_params,
                        extra_tensors=(1 if box else 0) + cnn_tensors)
        critic = network("critic", [(feats, *vf, 1)], extra_params=0 if share else cnn_params,
                         extra_tensors=0 if share else cnn_tensors)
        opt = Optimizer("policy", inputs.optimizer, actor.params + critic.params, actor.tensors + critic.tensors)
        return ModelShape((actor, critic), (opt,), cnn)

    def graph_floats(self, cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape, saves_input: bool) -> int:
        return sum(stack_graph_floats(s, saves_input) for n in shape.networks for s in n.stacks)

    def cnn_passes(self, cfg: RunConfig) -> int:
        return 1 if cfg.policy.share_features_extractor is not False else 2

    def sample_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        """obs, actions cast to float32, old values, old log-probs, advantages, returns, normalized advantages,
        and per row what the family's rollout buffer adds (LSTM states, action masks)."""
        long_actions = 8 * spaces.action_dim if spaces.action_kind != "box" else 0
        per: int = observation_bytes(spaces) + FLOAT * spaces.action_dim + long_actions + 5 * FLOAT
        rows, _ = self.rollout_extra_bytes(cfg, spaces)
        per += rows // max(section_as(cfg, RolloutParams).n_steps * cfg.runtime.n_envs, 1)
        return per
