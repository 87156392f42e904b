"""Which engine? The engines a tune probes for a config here: SB3 (PyTorch), and SBX (JAX) where it can run.

SBX is not faster everywhere: on the loaded 2-core development machine its steps/s over SB3's ranged 1.2-2.4x for
SAC on Pendulum, 0.6-1.6x for DQN on CartPole, and 0.5-1.7x for 20k PPO steps, its compile included
(``bench/engines.py``), so the tune measures it like any other setting instead of assuming it. It is a dimension
only where it can be one: sbx installed here (asked without importing jax) and the algorithm one SBX has. A config
the other engine cannot run (an option SBX lacks, your own torch network) is one row naming the field
(``core.config.engines.engine_issues``), never probed.
"""

from __future__ import annotations

from core.config.engines import ENGINES, SBX_ALGORITHMS, sbx_installed
from core.config.schema import RunConfig


def tune_engines(cfg: RunConfig, sbx_here: bool | None = None) -> list[str]:
    """The engines to probe ``cfg`` with, its own first (its row is the baseline); just its own where SBX is no
    choice here. ``sbx_here`` overrides asking the install (tests, a planned machine)."""
    own = cfg.runtime.engine
    here = sbx_installed() if sbx_here is None else sbx_here
    if cfg.spec is None or cfg.spec.name not in SBX_ALGORITHMS or not here:
        return [own]
    return [own] + [e for e in ENGINES if e != own]
