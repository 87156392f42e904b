"""sb3-contrib's TRPO: PPO's ``ActorCriticPolicy``, but the actor moves by a natural-gradient step
(conjugate gradient and a line search), so the policy's optimizer only ever steps the critic: torch
keeps optimizer state for the critic's parameters alone."""

from __future__ import annotations

from dataclasses import replace

from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.estimate.families.actor_critic import ActorCritic
from core.estimate.networks import ModelShape, Optimizer


class Trpo(ActorCritic):
    network = "trpo"

    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        base = super().shape(cfg, spaces)
        critic = base.network("critic")
        [opt] = base.optimizers
        return replace(base, optimizers=(Optimizer("policy (critic steps)", opt.kind, critic.params, critic.tensors),))
