"""A small graph env: walk from node to node to reach the goal node.

Each episode draws a new connected graph of ``nodes`` nodes (a ring plus random chords). The
observation is a Dict: ``nodes`` (one row of features per node: where the agent is, where the goal
is, the node's degree, a constant) and ``adjacency`` (a 0/1 matrix). The action names a node: a
neighbour of the agent's node moves it there, any other node leaves it where it is. Reaching the
goal gives +1 and ends the episode; each step costs 0.02; an episode lasts at most ``max_steps``.

Cheap on purpose (a few microseconds a step): it exists to show a network of your own, not to be hard.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

FEATURES = 4  # at the agent, at the goal, degree / nodes, 1


class GraphEnv(gym.Env[dict[str, np.ndarray], int]):
    """Reach the goal node on a random graph; observations are node features and an adjacency matrix."""

    metadata = {"render_modes": []}

    def __init__(self, nodes: int = 6, chords: int = 3, max_steps: int = 20):
        self.n, self.chords, self.max_steps = int(nodes), int(chords), int(max_steps)
        self.observation_space = gym.spaces.Dict({
            "nodes": gym.spaces.Box(0.0, 1.0, (self.n, FEATURES), np.float32),
            "adjacency": gym.spaces.Box(0.0, 1.0, (self.n, self.n), np.float32),
        })
        self.action_space = gym.spaces.Discrete(self.n)
        self.adjacency = np.zeros((self.n, self.n), np.float32)
        self.agent = self.goal = self.steps = 0

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        adj = np.zeros((self.n, self.n), np.float32)
        ring = np.arange(self.n)
        adj[ring, (ring + 1) % self.n] = adj[(ring + 1) % self.n, ring] = 1.0
        for _ in range(self.chords):
            a, b = self.np_random.choice(self.n, 2, replace=False)
            adj[a, b] = adj[b, a] = 1.0
        self.adjacency = adj
        self.agent, self.goal = (int(x) for x in self.np_random.choice(self.n, 2, replace=False))
        self.steps = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        self.steps += 1
        if self.adjacency[self.agent, int(action)]:
            self.agent = int(action)
        reached = self.agent == self.goal
        reward = 1.0 if reached else -0.02
        truncated = not reached and self.steps >= self.max_steps
        return self._obs(), reward, reached, truncated, {"reached": float(reached)} if reached or truncated else {}

    def _obs(self) -> dict[str, np.ndarray]:
        nodes = np.zeros((self.n, FEATURES), np.float32)
        nodes[self.agent, 0] = 1.0
        nodes[self.goal, 1] = 1.0
        nodes[:, 2] = self.adjacency.sum(axis=1) / self.n
        nodes[:, 3] = 1.0
        return {"nodes": nodes, "adjacency": self.adjacency.copy()}
