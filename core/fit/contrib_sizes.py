"""What sb3-contrib's algorithms hold beyond SB3's families, counted without torch (read from its source).

- RecurrentPPO (``RecurrentActorCriticPolicy``): an ``nn.LSTM`` (``n_lstm_layers`` of
  ``lstm_hidden_size``) between the features and the pi stack, and one for the critic
  (``enable_critic_lstm``), or the actor's (``shared_lstm``), or a Linear(features, hidden); the pi
  and vf stacks then start at the hidden size. Its rollout buffer keeps each step's hidden and cell
  states of both LSTMs: four float32 arrays of ``n_steps x layers x n_envs x hidden``.
- MaskablePPO: PPO's networks; its rollout buffer keeps a float32 mask per step and action choice
  (n for Discrete, sum(nvec) for MultiDiscrete, 2n for MultiBinary).
- TQC: SAC's actor; each of the ``n_critics`` critics ends in ``n_quantiles`` outputs (in ``sb3_sizes``).
- CrossQ: SAC's actor and critics without target networks; a BatchRenorm1d (scale and bias
  parameters, running mean and variance buffers) before each Linear of the critics and each hidden
  Linear of the actor (plus one after it); the critics see the current and next observations in one
  joint batch, so their forward pass is twice the batch.
- ARS: one policy network (``with_bias``; LinearPolicy: a bias-free linear map), no gradients and no
  optimizer; each update holds ``n_delta`` perturbations, ``2 x n_delta`` candidate weight vectors
  and a copy of the policy.
"""

from __future__ import annotations

from dataclasses import replace

from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.fit.networks import FLOAT, ModelShape, Network, Optimizer, network


def lstm_params(inputs: int, hidden: int, layers: int) -> tuple[int, int]:
    """Parameters and tensors of ``nn.LSTM(inputs, hidden, layers)``: weight_ih, weight_hh, two biases per layer."""
    params = sum(4 * hidden * ((inputs if layer == 0 else hidden) + hidden) + 8 * hidden for layer in range(layers))
    return params, 4 * layers


def recurrent_shape(cfg: RunConfig, base: ModelShape, feats: int) -> ModelShape:
    """RecurrentPPO: ``base`` is the actor-critic built on the LSTM's output size; the LSTMs are added to it."""
    p = cfg.params
    hidden, layers = p.lstm_hidden_size, p.n_lstm_layers
    params, tensors = lstm_params(feats, hidden, layers)
    nets = [*base.networks, Network("lstm_actor", params, tensors, True)]
    if p.enable_critic_lstm:
        nets.append(Network("lstm_critic", params, tensors, True))
    elif not p.shared_lstm:
        nets.append(network("critic_linear", [(feats, hidden)]))
    [opt] = base.optimizers
    total = sum(n.params for n in nets)
    return ModelShape(tuple(nets), (Optimizer(opt.name, opt.kind, total, sum(n.tensors for n in nets)),), base.cnn)


def crossq_shape(cfg: RunConfig, base: ModelShape) -> ModelShape:
    """CrossQ: SAC's shape without the critic target, with BatchRenorm parameters in the actor and critics."""
    nets = []
    bn = bool(cfg.params.batch_norm)
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
    opts = tuple(replace(o, params=by_name[o.name].params, tensors=by_name[o.name].tensors) if o.name in by_name else o
                 for o in base.optimizers)
    return ModelShape(tuple(nets), opts, base.cnn)


def ars_shape(cfg: RunConfig, spaces: EnvSpaces, net_arch: list[int], feats: int) -> ModelShape:
    """ARS: the policy network alone (no optimizer: it moves by random search)."""
    p = cfg.params
    linear = bool(p.linear_policy)
    bias = p.with_bias if p.with_bias is not None else not linear
    sizes = (feats, spaces.action_logits) if linear else (feats, *net_arch, spaces.action_logits)
    pairs = list(zip(sizes[:-1], sizes[1:], strict=True))
    params = sum(a * b + (b if bias else 0) for a, b in pairs)
    return ModelShape((Network("policy", params, len(pairs) * (2 if bias else 1), False, (sizes,)),), ())


def ars_update_bytes(cfg: RunConfig, shape: ModelShape) -> int:
    """ARS's working memory of one update: weights, n_delta perturbations, 2 x n_delta candidates, a policy copy."""
    return FLOAT * shape.param_count * (3 * int(cfg.params.n_delta) + 2)


def rollout_extra_bytes(cfg: RunConfig, spaces: EnvSpaces) -> tuple[int, str]:
    """What sb3-contrib's rollout buffers keep beyond SB3's: LSTM states (RecurrentPPO), action masks (MaskablePPO)."""
    assert cfg.spec is not None
    rows = cfg.params.n_steps * cfg.runtime.n_envs
    if cfg.spec.network == "recurrent":
        return 4 * FLOAT * rows * cfg.params.n_lstm_layers * cfg.params.lstm_hidden_size, ", with the LSTM states"
    if cfg.spec.needs_action_masks:
        return FLOAT * rows * mask_dims(spaces), ", with the action masks"
    return 0, ""


def mask_dims(spaces: EnvSpaces) -> int:
    """Mask entries per step: one per action choice (MultiBinary: two per bit)."""
    return spaces.action_logits * (2 if spaces.action_kind == "multibinary" else 1)


def lstm_graph_floats(cfg: RunConfig) -> int:
    """Floats per sample an LSTM's backward keeps: four gates, the cell and hidden state, per layer and LSTM."""
    p = cfg.params
    lstms = 1 + (1 if p.enable_critic_lstm else 0)
    return int(lstms * p.n_lstm_layers * 6 * p.lstm_hidden_size)
