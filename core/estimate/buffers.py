"""What SB3 keeps in host RAM beside the networks, counted without torch: its rollout and replay
buffers (numpy arrays) and VecNormalize's statistics. Which of the buffers a run has, and what an
sb3-contrib rollout buffer adds to it, is its network family's (``core.estimate.families``)."""

from __future__ import annotations

from core.config.spaces import EnvSpaces
from core.estimate.networks import FLOAT, itemsize


def replay_action_itemsize(spaces: EnvSpaces) -> int:
    """ReplayBuffer casts float64 actions to float32 and keeps other dtypes."""
    return FLOAT if spaces.action_dtype == "float64" else itemsize(spaces.action_dtype)


def rollout_buffer_bytes(n_steps: int, n_envs: int, spaces: EnvSpaces) -> int:
    """SB3 RolloutBuffer: obs and actions in their space dtypes, six float32 columns."""
    per = spaces.obs_size * itemsize(spaces.obs_dtype) + spaces.action_dim * itemsize(spaces.action_dtype) + 6 * FLOAT
    return n_steps * n_envs * per


def replay_rows(buffer_size: int, n_envs: int) -> int:
    """Transitions the ReplayBuffer holds: ``max(buffer_size // n_envs, 1)`` per env."""
    return max(buffer_size // n_envs, 1) * n_envs


def replay_buffer_bytes(buffer_size: int, n_envs: int, spaces: EnvSpaces, optimize_memory_usage: bool) -> int:
    """SB3 ReplayBuffer: observations (and next_observations unless optimized) in the obs dtype,
    actions (float64 cast to float32), rewards, dones and timeouts as float32."""
    obs = spaces.obs_size * itemsize(spaces.obs_dtype) * (1 if optimize_memory_usage else 2)
    per = obs + spaces.action_dim * replay_action_itemsize(spaces) + 3 * FLOAT
    return replay_rows(buffer_size, n_envs) * per


def vecnormalize_bytes(n_envs: int, spaces: EnvSpaces) -> int:
    """VecNormalize: float64 running mean/var of obs, the return per env, and the last raw obs."""
    return 8 * (2 * spaces.obs_size + 2 + 2 * n_envs) + n_envs * spaces.obs_size * itemsize(spaces.obs_dtype)
