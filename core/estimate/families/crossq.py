"""sb3-contrib's CrossQ: SAC's actor and critics without target networks, counted without torch (read
from its source). A BatchRenorm1d (scale and bias parameters, running mean and variance buffers)
before each Linear of the critics and each hidden Linear of the actor (plus one after it); the
critics see the current and next observations in one joint batch, so their forward pass is twice
the batch."""

from __future__ import annotations

from dataclasses import replace

from core.config.algorithms.crossq import CrossQParams
from core.config.schema import RunConfig, section_as
from core.config.spaces import EnvSpaces
from core.estimate.families.sac import Sac
from core.estimate.networks import ModelShape, Network


class CrossQ(Sac):
    network = "crossq"

    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        """SAC's shape without the critic target, with BatchRenorm parameters in the actor and critics."""
        base = super().shape(cfg, spaces)
        nets = []
        bn = section_as(cfg, CrossQParams).batch_norm
        for net in base.networks:
            if net.name == "critic_target":
                continue
            if bn and net.name == "critic":
                dims = [d for s in net.stacks for d in s[:-1]]
            elif bn and net.name == "actor":
                dims = [d for s in net.stacks for d in s[:-1]] if len(net.stacks[0]) > 2 else []
            else:
                dims = []
            nets.append(replace(net, params=net.params + 2 * sum(dims), tensors=net.tensors + 2 * len(dims)))
        by_name = {n.name: n for n in nets}
        opts = tuple(replace(o, params=by_name[o.name].params, tensors=by_name[o.name].tensors) if o.name in by_name
                     else o for o in base.optimizers)
        return ModelShape(tuple(nets), opts, base.cnn)

    def critic_graph_floats(self, spaces: EnvSpaces, critic: Network, saves_input: bool) -> int:
        """Current and next transitions in one joint pass, batch renorm keeping its input."""
        return 2 * (super().critic_graph_floats(spaces, critic, saves_input) + sum(d for s in critic.stacks for d in s[:-1]))
