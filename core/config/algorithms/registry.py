"""One module per algorithm (its hyperparameters and its ``AlgoSpec``), and the table of them.

To add an algorithm: write ``<name>.py`` like ``ppo.py``, add it to ``ALGORITHMS`` below and give
``RunConfig`` its section field (ARCHITECTURE.md, "Where do I add ...").
"""

from __future__ import annotations

from core.config.algorithms.a2c import A2C
from core.config.algorithms.ars import ARS
from core.config.algorithms.crossq import CROSSQ
from core.config.algorithms.ddpg import DDPG
from core.config.algorithms.dqn import DQN
from core.config.algorithms.maskable_ppo import MASKABLE_PPO
from core.config.algorithms.ppo import PPO
from core.config.algorithms.qrdqn import QRDQN
from core.config.algorithms.recurrent_ppo import RECURRENT_PPO
from core.config.algorithms.sac import SAC
from core.config.algorithms.spec import AlgoSpec
from core.config.algorithms.td3 import TD3
from core.config.algorithms.tqc import TQC
from core.config.algorithms.trpo import TRPO

# SB3's own, then sb3-contrib's (``contrib``: trained only where it is installed, core.config.algorithms.contrib)
ALGORITHMS: dict[str, AlgoSpec] = {spec.name: spec for spec in (PPO, A2C, SAC, DQN, TD3, DDPG, TQC, TRPO, ARS, RECURRENT_PPO,
                                                                MASKABLE_PPO, CROSSQ, QRDQN)}
ALGOS: tuple[str, ...] = tuple(ALGORITHMS)


def normalize_algo(name: str) -> str:
    """``ppo`` -> ``PPO``, ``recurrentppo`` -> ``RecurrentPPO``, ``Random`` -> ``random``: the spelling the schema uses."""
    by_lower = {algo.lower(): algo for algo in ALGORITHMS}
    return by_lower.get(name.lower(), name.lower())


def algorithms_for(action_kind: str) -> list[str]:
    """The algorithms that take an action space of this kind, in table order."""
    return [spec.name for spec in ALGORITHMS.values() if spec.takes(action_kind)]
