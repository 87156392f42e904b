"""What the rollout-buffer algorithms (PPO, A2C, TRPO, RecurrentPPO, MaskablePPO) share, like SB3's
OnPolicyAlgorithm: ``RolloutParams`` holds ``n_steps``; ``MinibatchParams`` adds the minibatch of the
ones that split a rollout into minibatches (all but A2C). A table subclasses them and gives its own
defaults where SB3's differ."""

from __future__ import annotations

from typing import Literal

from core.config.fields import Section, hp


class RolloutParams(Section):
    """An on-policy table: each update learns from a rollout of n_envs x n_steps (defaults: PPO's)."""

    n_steps: int = hp(2048, "Steps per env per rollout",
                      "Rollout length per env; a rollout holds n_envs x n_steps transitions.", "steps", ge=1, le=1_000_000,
                      knob=True)


class MinibatchParams(RolloutParams):
    """An on-policy table whose update takes the rollout in minibatches of ``batch_size`` (PPO's: an int or 'auto')."""

    batch_size: int | Literal["auto"] = hp(64, "Minibatch size",
                                           "Transitions per gradient step; must divide n_envs x n_steps ('auto' picks the "
                                           "largest divisor up to auto_batch_cap).", "transitions", knob=True)
