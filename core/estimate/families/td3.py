"""SB3's TD3 and DDPG, counted without torch (read from SB3 2.x): an actor (pi stack ending in
action_dim, tanh) and its ``actor_target``, the critics and their target (``off_policy``; DDPG has
one critic), Adam for actor and critic."""

from __future__ import annotations

from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.estimate.families.family import policy_inputs
from core.estimate.families.off_policy import ActorQCritics
from core.estimate.networks import ModelShape, Optimizer, network


class Td3(ActorQCritics):
    network = "td3"

    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        inputs = policy_inputs(cfg, spaces)
        critic, target = self.critics(cfg, spaces, inputs)
        cnn, stack = inputs.cnn, (inputs.features, *inputs.arch.get("pi", []), spaces.action_dim)
        cnn_params, cnn_tensors = (cnn.params, cnn.tensors) if cnn else (0, 0)
        actor = network("actor", [stack], extra_params=cnn_params, extra_tensors=cnn_tensors)
        actor_target = network("actor_target", [stack], trainable=False, extra_params=cnn_params, extra_tensors=cnn_tensors)
        # with a shared extractor the critic's optimizer steps the actor's CNN too
        share = bool(cfg.policy.share_features_extractor)
        critic_opt = (critic.params + (cnn_params if share else 0), critic.tensors + (cnn_tensors if share else 0))
        return ModelShape((actor, actor_target, critic, target),
                          (Optimizer("actor", inputs.optimizer, actor.params, actor.tensors),
                           Optimizer("critic", inputs.optimizer, *critic_opt)), cnn)
