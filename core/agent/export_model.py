"""The policy as one ``nn.Module`` to export: raw observations in, the env's own actions out, deterministic.

SB3's ONNX recipe exports the network alone, so a user must redo the observation normalisation and
the action rescaling by hand (SB3 issues #383, #1349, #1125). ``ExportedPolicy`` does what the agent
did in its env, in order: ``VecNormalize.normalize_obs`` with the checkpoint's statistics,
``VecTransposeImage`` (channels-last images to channels-first), the policy's own preprocessing and
network (``extract_features``: images / 255), the deterministic action (SB3's ``mode()``), then what
``predict`` does to it: a squashed Box action unscaled from [-1, 1] (SAC, TD3, DDPG, gSDE with
squashing), any other Box action clipped to the bounds, a Discrete action as an int64 index.

What cannot be exported faithfully is refused with ``ExportRefused``, whose message says why. An SBX run
(``runtime.engine: sbx``) is refused before its checkpoint loads: its policy is a flax network, not a torch module,
and no maintained converter is among rlpanel's dependencies (jax2onnx would be a new one); its agent is played by
evaluate, watch and record.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.distributions import StateDependentNoiseDistribution
from stable_baselines3.common.policies import ActorCriticPolicy, BaseModel
from stable_baselines3.common.vec_env import VecNormalize
from torch import nn


class ExportRefused(ValueError):
    """This policy cannot be exported as asked; the message says why (one line)."""


# how the deterministic action is computed from the policy's modules, by the policy's shape
ACTOR_CRITIC, SQUASHED_GAUSSIAN, DETERMINISTIC_ACTOR, Q_VALUES, QUANTILES = (
    "actor_critic", "squashed_gaussian", "deterministic_actor", "q_values", "quantiles")


class ExportedPolicy(nn.Module):
    """Raw observations ``(batch, *obs_shape)`` float32 -> deterministic actions ``(batch, *action_shape)``."""

    obs_mean: torch.Tensor  # buffers: constants of the exported graph
    obs_std: torch.Tensor
    low: torch.Tensor
    high: torch.Tensor

    def __init__(self, policy: nn.Module, head: str, obs_mean: np.ndarray | None, obs_std: np.ndarray | None,
                 clip_obs: float, transpose: bool, action_space: gym.Space[Any], squash: bool):
        super().__init__()
        self.policy = policy
        self.head = head
        self.normalize = obs_mean is not None and obs_std is not None
        # the statistics as float32 constants: (obs - mean) / sqrt(var + eps), with sqrt(var + eps) taken in float64
        self.register_buffer("obs_mean", torch.as_tensor(np.asarray(obs_mean if self.normalize else 0.0), dtype=torch.float32))
        self.register_buffer("obs_std", torch.as_tensor(np.asarray(obs_std if self.normalize else 1.0), dtype=torch.float32))
        self.clip_obs = float(clip_obs)
        self.transpose = transpose
        self.discrete = isinstance(action_space, gym.spaces.Discrete)
        self.squash = squash
        self.action_shape = tuple(int(n) for n in (action_space.shape or ()))
        box = action_space if isinstance(action_space, gym.spaces.Box) else None
        self.register_buffer("low", torch.as_tensor(box.low if box is not None else 0.0, dtype=torch.float32))
        self.register_buffer("high", torch.as_tensor(box.high if box is not None else 0.0, dtype=torch.float32))

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        x = observation
        if self.normalize:
            x = torch.clamp((x - self.obs_mean) / self.obs_std, -self.clip_obs, self.clip_obs)
        if self.transpose:  # VecTransposeImage: (batch, H, W, C) -> (batch, C, H, W)
            x = x.permute(0, 3, 1, 2)
        if self.discrete:
            return self._index(x)
        action = self._box(x).reshape((-1, *self.action_shape))
        if self.squash:  # BasePolicy.unscale_action
            return self.low + 0.5 * (action + 1.0) * (self.high - self.low)
        return torch.maximum(torch.minimum(action, self.high), self.low)  # predict's np.clip

    def _index(self, x: torch.Tensor) -> torch.Tensor:
        p: Any = self.policy
        if self.head == ACTOR_CRITIC:  # Categorical.mode(): the argmax of the probabilities
            return torch.softmax(self._action_net(x), dim=1).argmax(dim=1)
        if self.head == Q_VALUES:
            q_values: torch.Tensor = p.q_net(x)
        else:  # QR-DQN: the mean over the quantiles
            q_values = p.quantile_net(x).mean(dim=1)
        return q_values.argmax(dim=1).reshape(-1)

    def _box(self, x: torch.Tensor) -> torch.Tensor:
        p: Any = self.policy
        if self.head == ACTOR_CRITIC:
            mean = self._action_net(x)
            sde_squashed = isinstance(p.action_dist, StateDependentNoiseDistribution) and p.action_dist.bijector is not None
            return torch.tanh(mean) if sde_squashed else mean
        if self.head == SQUASHED_GAUSSIAN:  # SAC, TQC, CrossQ: tanh of the mean, gSDE or not
            squashed, _log_std, _kwargs = p.actor.get_action_dist_params(x)
            return torch.tanh(squashed)
        actor: nn.Module = p.actor  # TD3, DDPG: the actor ends in tanh
        out: torch.Tensor = actor(x)
        return out

    def _action_net(self, x: torch.Tensor) -> torch.Tensor:
        """An actor-critic policy's action logits or mean actions (``ActorCriticPolicy.get_distribution``'s path)."""
        p: Any = self.policy
        out: torch.Tensor = p.action_net(p.mlp_extractor.forward_actor(BaseModel.extract_features(p, x, p.pi_features_extractor)))
        return out


def refuse_engine(run: str, engine: str) -> None:
    """``ExportRefused`` for a run whose policy is not a torch module: an SBX (JAX) run's."""
    if engine != "sb3":
        raise ExportRefused(f"run {run} trained with runtime.engine: {engine} (JAX, a flax network): export-policy writes "
                            "ONNX or TorchScript from SB3's torch policies only; evaluate, watch and record play this "
                            "run's checkpoints, and a run with runtime.engine: sb3 exports")


def exported_policy(model: BaseAlgorithm, normalize: VecNormalize | None, raw_space: gym.Space[Any],
                    algo: str) -> ExportedPolicy:
    """``model``'s deterministic policy for the raw observations of ``raw_space`` (what the run's env gives before
    VecNormalize), with ``normalize``'s statistics baked in; raises ``ExportRefused`` for what it cannot export."""
    policy = model.policy
    head = _head(policy, algo)
    if not isinstance(raw_space, gym.spaces.Box):
        raise ExportRefused(f"the run's observations are a {type(raw_space).__name__} space; the export takes one float32 "
                            "array of observations, so only Box observation spaces are exported")
    action_space = model.action_space
    if not isinstance(action_space, gym.spaces.Box | gym.spaces.Discrete):
        raise ExportRefused(f"the run's actions are a {type(action_space).__name__} space; the export gives Box actions "
                            "(unscaled and clipped) or a Discrete index, not this one")
    mean = std = None
    clip_obs = 0.0
    if normalize is not None and normalize.norm_obs:
        stats: Any = normalize.obs_rms
        mean, std = stats.mean, np.sqrt(stats.var + normalize.epsilon)
        clip_obs = float(normalize.clip_obs)
    module = ExportedPolicy(policy, head, mean, std, clip_obs, _transposed(raw_space, policy.observation_space),
                            action_space, squash=bool(policy.squash_output))
    return module.eval()


def _head(policy: nn.Module, algo: str) -> str:
    """How the deterministic action is computed, or ``ExportRefused`` naming why this policy is not exported."""
    name = type(policy).__name__
    if "Recurrent" in name or hasattr(policy, "lstm_actor"):
        raise ExportRefused(f"{algo}'s policy keeps an LSTM state from step to step; the export takes observations only "
                            "and returns actions, so it would not act as the trained agent does: RecurrentPPO is not exported")
    if "Maskable" in name:
        raise ExportRefused(f"{algo} chooses only among the actions the env's action_masks() allows; the exported model "
                            "takes no mask and could choose an invalid action: MaskablePPO is not exported")
    if isinstance(policy, ActorCriticPolicy):
        return ACTOR_CRITIC
    actor = getattr(policy, "actor", None)
    if actor is not None and hasattr(actor, "get_action_dist_params"):
        return SQUASHED_GAUSSIAN
    if actor is not None and hasattr(actor, "mu"):
        return DETERMINISTIC_ACTOR
    if hasattr(policy, "q_net"):
        return Q_VALUES
    if hasattr(policy, "quantile_net"):
        return QUANTILES
    raise ExportRefused(f"{algo}'s policy ({name}) is not one the export knows; PPO, A2C, TRPO, SAC, TD3, DDPG, TQC, "
                        "DQN and QR-DQN policies are exported")


def _transposed(raw: gym.spaces.Box, seen: gym.Space[Any]) -> bool:
    """Whether SB3 transposed these observations (VecTransposeImage) before the policy saw them."""
    if seen.shape == raw.shape:
        return False
    shape = raw.shape
    if len(shape) == 3 and seen.shape == (shape[2], shape[0], shape[1]):
        return True
    raise ExportRefused(f"the policy sees observations of shape {seen.shape} and the env gives {shape}; "
                        "the export does not know how one becomes the other")
