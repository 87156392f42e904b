"""SB3's DQN, counted without torch (read from SB3 2.x): a ``q_net`` stack ending in n_actions (behind
its own NatureCNN with CnnPolicy), a ``q_net_target`` copy, Adam over q_net, batches sampled from the
replay buffer."""

from __future__ import annotations

from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.estimate.families.family import GradientFamily, policy_inputs, replay_sample_bytes, stack_graph_floats
from core.estimate.networks import ModelShape, Optimizer, network


class QNetwork(GradientFamily):
    network = "q_network"

    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        inputs = policy_inputs(cfg, spaces)
        cnn = inputs.cnn
        stack = (inputs.features, *inputs.arch.get("qf", []), self.q_outputs(cfg, spaces))
        extra = (cnn.params, cnn.tensors) if cnn else (0, 0)
        q_net = network("q_net", [stack], extra_params=extra[0], extra_tensors=extra[1])
        target = network("q_net_target", [stack], trainable=False, extra_params=extra[0], extra_tensors=extra[1])
        return ModelShape((q_net, target), (Optimizer("q_net", inputs.optimizer, q_net.params, q_net.tensors),), cnn)

    def q_outputs(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        """The Q-network's outputs: one value per action (QR-DQN: n_quantiles per action)."""
        return spaces.action_logits

    def graph_floats(self, cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape, saves_input: bool) -> int:
        return sum(stack_graph_floats(s, saves_input) for s in shape.network("q_net").stacks)

    def cnn_passes(self, cfg: RunConfig) -> int:
        return 1  # the target's forward runs without a graph

    def sample_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        return replay_sample_bytes(spaces)
