"""sb3-contrib's QR-DQN: DQN's ``quantile_net`` and its target, each ending in n_actions x ``n_quantiles``
outputs (QuantileNetwork)."""

from __future__ import annotations

from core.config.algorithms.qrdqn import QRDQNParams
from core.config.schema import RunConfig, section_as
from core.config.spaces import EnvSpaces
from core.estimate.families.q_network import QNetwork


class QrNetwork(QNetwork):
    network = "qr_network"

    def q_outputs(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        return spaces.action_logits * section_as(cfg, QRDQNParams).n_quantiles
