"""sb3-contrib's TQC: SAC's actor and entropy coefficient; each of the ``n_critics`` critics ends in
``n_quantiles`` outputs."""

from __future__ import annotations

from core.config.algorithms.tqc import TQCParams
from core.config.schema import RunConfig, section_as
from core.estimate.families.sac import Sac


class Tqc(Sac):
    network = "tqc"

    def critic_outputs(self, cfg: RunConfig) -> int:
        return section_as(cfg, TQCParams).n_quantiles
