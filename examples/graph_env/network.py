"""A graph-attention features extractor in plain torch (no torch-geometric needed).

Each layer is multi-head attention in which a node attends only to its neighbours and itself (the
adjacency matrix, plus the identity, is the attention mask), with a residual connection and layer
norm: the idea of GAT (Velickovic et al., 2018) with PyTorch's own ``nn.MultiheadAttention``. The
node embeddings of the last layer, flattened, are the features SB3's policy and value heads read.

Use it from a run config::

    policy:
      features_extractor: examples.graph_env.network:GraphAttention
      features_extractor_kwargs: {hidden: 32, heads: 4, layers: 2}

With torch-geometric installed you can use its ``GATConv`` instead: turn each observation's
adjacency into an ``edge_index`` (``adjacency.nonzero().t()``), batch the graphs with
``torch_geometric.data.Batch.from_data_list`` and replace the attention layers by
``GATConv(hidden, hidden // heads, heads=heads, dropout=dropout)``; the rest stays as it is.
"""

from __future__ import annotations

import gymnasium as gym
import torch as th
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn


class GraphAttention(BaseFeaturesExtractor):
    """Masked multi-head attention over the nodes of a Dict observation {nodes, adjacency}."""

    def __init__(self, observation_space: gym.spaces.Dict, hidden: int = 32, heads: int = 4, layers: int = 2,
                 dropout: float = 0.0):
        nodes_space = observation_space["nodes"]
        n, features = int(nodes_space.shape[0]), int(nodes_space.shape[1])
        if hidden % heads:
            raise ValueError(f"hidden ({hidden}) must be a multiple of heads ({heads})")
        super().__init__(observation_space, features_dim=n * hidden)
        self.heads = heads
        self.embed = nn.Linear(features, hidden)
        self.attention = nn.ModuleList(nn.MultiheadAttention(hidden, heads, dropout=dropout, batch_first=True)
                                       for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))
        self.flatten = nn.Flatten()

    def forward(self, observations: dict[str, th.Tensor]) -> th.Tensor:
        x = th.relu(self.embed(observations["nodes"]))
        adjacency = observations["adjacency"]
        n = adjacency.shape[-1]
        eye = th.eye(n, dtype=adjacency.dtype, device=adjacency.device)
        blocked = (adjacency + eye) <= 0  # True: no edge, may not attend
        mask = blocked.repeat_interleave(self.heads, dim=0)  # (batch * heads, n, n), as nn.MultiheadAttention takes it
        for attend, norm in zip(self.attention, self.norms, strict=True):
            out, _ = attend(x, x, x, attn_mask=mask, need_weights=False)
            x = norm(x + out)
        return self.flatten(x)
