"""sb3-contrib's MaskablePPO: PPO's networks; its rollout buffer keeps a float32 mask per step and
action choice (n for Discrete, sum(nvec) for MultiDiscrete, 2n for MultiBinary)."""

from __future__ import annotations

from core.config.algorithms.on_policy import RolloutParams
from core.config.schema import RunConfig, section_as
from core.config.spaces import EnvSpaces
from core.estimate.families.actor_critic import ActorCritic
from core.estimate.networks import FLOAT


def mask_dims(spaces: EnvSpaces) -> int:
    """Mask entries per step: one per action choice (MultiBinary: two per bit)."""
    return spaces.action_logits * (2 if spaces.action_kind == "multibinary" else 1)


class MaskablePpo(ActorCritic):
    network = "maskable_ppo"

    def rollout_extra_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> tuple[int, str]:
        rows = section_as(cfg, RolloutParams).n_steps * cfg.runtime.n_envs
        return FLOAT * rows * mask_dims(spaces), ", with the action masks"
