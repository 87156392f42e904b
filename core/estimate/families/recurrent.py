"""sb3-contrib's RecurrentPPO (``RecurrentActorCriticPolicy``), counted without torch (read from its source).

An ``nn.LSTM`` (``n_lstm_layers`` of ``lstm_hidden_size``) between the features and the pi stack,
and one for the critic (``enable_critic_lstm``), or the actor's (``shared_lstm``), or a
Linear(features, hidden); the pi and vf stacks then start at the hidden size. Its rollout buffer
keeps each step's hidden and cell states of both LSTMs: four float32 arrays of
``n_steps x layers x n_envs x hidden``.
"""

from __future__ import annotations

from core.config.algorithms.recurrent_ppo import RecurrentPPOParams
from core.config.schema import RunConfig, section_as
from core.config.spaces import EnvSpaces
from core.estimate.families.actor_critic import ActorCritic
from core.estimate.families.family import policy_inputs
from core.estimate.networks import FLOAT, ModelShape, Network, Optimizer, network


def lstm_params(inputs: int, hidden: int, layers: int) -> tuple[int, int]:
    """Parameters and tensors of ``nn.LSTM(inputs, hidden, layers)``: weight_ih, weight_hh, two biases per layer."""
    params = sum(4 * hidden * ((inputs if layer == 0 else hidden) + hidden) + 8 * hidden for layer in range(layers))
    return params, 4 * layers


class Recurrent(ActorCritic):
    network = "recurrent"
    cudnn = True  # nn.LSTM runs on cuDNN

    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        """The actor-critic built on the LSTM's output size, with the LSTMs added to it and to its optimizer."""
        p = section_as(cfg, RecurrentPPOParams)
        inputs = policy_inputs(cfg, spaces)
        base = self.actor_critic(cfg, spaces, inputs, p.lstm_hidden_size)
        hidden, layers = p.lstm_hidden_size, p.n_lstm_layers
        params, tensors = lstm_params(inputs.features, hidden, layers)
        nets = [*base.networks, Network("lstm_actor", params, tensors, True)]
        if p.enable_critic_lstm:
            nets.append(Network("lstm_critic", params, tensors, True))
        elif not p.shared_lstm:
            nets.append(network("critic_linear", [(inputs.features, hidden)]))
        [opt] = base.optimizers
        total = sum(n.params for n in nets)
        return ModelShape(tuple(nets), (Optimizer(opt.name, opt.kind, total, sum(n.tensors for n in nets)),), base.cnn)

    def graph_floats(self, cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape, saves_input: bool) -> int:
        """The stacks', plus what an LSTM's backward keeps: four gates, the cell and hidden state, per layer and LSTM."""
        p = section_as(cfg, RecurrentPPOParams)
        lstms = 1 + (1 if p.enable_critic_lstm else 0)
        return super().graph_floats(cfg, spaces, shape, saves_input) + int(lstms * p.n_lstm_layers * 6 * p.lstm_hidden_size)

    def rollout_extra_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> tuple[int, str]:
        p = section_as(cfg, RecurrentPPOParams)
        return 4 * FLOAT * p.n_steps * cfg.runtime.n_envs * p.n_lstm_layers * p.lstm_hidden_size, ", with the LSTM states"
