"""One module per network family (``AlgoSpec.network``): the networks, optimizers, working memory and
sampled batch that an SB3 or sb3-contrib policy class has, counted without torch; ``FAMILIES`` is the table.

SB3's: ``actor_critic`` (PPO, A2C), ``sac``, ``td3`` (TD3, DDPG), ``q_network`` (DQN); sb3-contrib's:
``trpo``, ``maskable_ppo``, ``recurrent`` (RecurrentPPO), ``tqc``, ``crossq``, ``ars``, ``qr_network`` (QR-DQN). What they
share is in ``family`` (the ``Family`` they answer as) and ``off_policy`` (actor and Q critics); the
host buffers are ``core.estimate.buffers``. A new family: a module with a ``Family`` subclass (most extend
one above), an entry here, and a test against the real objects in ``tests/core/estimate/``.
"""

from __future__ import annotations

from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.estimate.families.actor_critic import ActorCritic
from core.estimate.families.ars import Ars
from core.estimate.families.crossq import CrossQ
from core.estimate.families.family import Family, train_batch
from core.estimate.families.maskable_ppo import MaskablePpo
from core.estimate.families.q_network import QNetwork
from core.estimate.families.qr_network import QrNetwork
from core.estimate.families.recurrent import Recurrent
from core.estimate.families.sac import Sac
from core.estimate.families.td3 import Td3
from core.estimate.families.tqc import Tqc
from core.estimate.families.trpo import Trpo
from core.estimate.networks import ModelShape

FAMILIES: dict[str, Family] = {family.network: family for family in (
    ActorCritic(), Sac(), Td3(), QNetwork(), Trpo(), MaskablePpo(), Recurrent(), Tqc(), CrossQ(), Ars(), QrNetwork())}

__all__ = ["FAMILIES", "Family", "family_of", "model_shape", "train_batch"]


def family_of(cfg: RunConfig) -> Family:
    """The family of the config's algorithm (a baseline has none)."""
    assert cfg.spec is not None, "a baseline holds no network"
    return FAMILIES[cfg.spec.network]


def model_shape(cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
    """The networks and optimizers SB3 builds for ``cfg`` on these spaces."""
    return family_of(cfg).shape(cfg, spaces)
