"""What every network family answers for the estimate (``Family``), and the counting its families share.

A family is what ``AlgoSpec.network`` names: the networks and optimizers an SB3 policy class builds,
the working memory of one update, the sampled batch copied to the device and what its rollout
buffer keeps beyond SB3's. Families trained by backpropagation (``GradientFamily``) share the
activation and batch arithmetic and differ in their autograd graph and in what one sampled row holds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from core.config.algorithms.a2c import A2CParams
from core.config.schema import RunConfig, resolved_activation, resolved_net_arch
from core.config.spaces import EnvSpaces
from core.estimate.buffers import replay_action_itemsize
from core.estimate.networks import FLOAT, SAVES_INPUT, Cnn, ModelShape, itemsize, nature_cnn


@dataclass(frozen=True)
class PolicyInputs:
    """What every family's networks are built from: the CNN (CnnPolicy on images), the hidden layers of
    each network (``pi``, ``vf``, ``qf``), the width the stacks take and the optimizer's kind."""

    cnn: Cnn | None
    arch: dict[str, list[int]]
    features: int
    optimizer: str


def policy_kind(cfg: RunConfig, spaces: EnvSpaces) -> str:
    """The SB3 policy the worker builds: the config's, or chosen from the observations."""
    kind = str(cfg.policy.kind)
    if kind != "auto":
        return kind
    if spaces.obs_kind == "dict":
        return "MultiInputPolicy"
    return "CnnPolicy" if spaces.obs_image else "MlpPolicy"


def policy_inputs(cfg: RunConfig, spaces: EnvSpaces) -> PolicyInputs:
    cnn = nature_cnn(spaces.image_chw) if policy_kind(cfg, spaces) == "CnnPolicy" and spaces.obs_image else None
    arch = resolved_net_arch(cfg, cnn=cnn is not None)
    chosen = str(cfg.policy.optimizer)
    rms_prop = isinstance(cfg.params, A2CParams) and cfg.params.use_rms_prop  # A2C's own optimizer
    optimizer = chosen if chosen != "auto" else "rmsprop" if rms_prop else "adam"
    return PolicyInputs(cnn, arch, cnn.features if cnn else spaces.obs_features, optimizer)


def train_batch(cfg: RunConfig) -> int:
    """Samples in one forward/backward pass: PPO's minibatch, A2C's whole rollout, SAC/DQN's batch."""
    assert cfg.spec is not None, "a baseline trains nothing"
    return cfg.spec.train_batch(cfg.params, cfg.runtime.n_envs)  # PPO's 'auto' is resolved by validation


def stack_graph_floats(stack: tuple[int, ...], saves_input: bool) -> int:
    """Floats per sample the autograd graph keeps for one MLP stack (input excluded)."""
    hidden = stack[1:-1]
    return sum(hidden) * (2 if saves_input else 1) + stack[-1]


def observation_bytes(spaces: EnvSpaces) -> int:
    """One observation on the device: as stored, plus its float copy when it is not already float32 Box."""
    obs = spaces.obs_size * itemsize(spaces.obs_dtype)
    return obs + (FLOAT * spaces.obs_features if (spaces.obs_dtype != "float32" or spaces.obs_kind != "box") else 0)


def replay_sample_bytes(spaces: EnvSpaces) -> int:
    """One sampled transition: obs, next_obs (each with its float copy), actions, dones, rewards."""
    return 2 * observation_bytes(spaces) + spaces.action_dim * replay_action_itemsize(spaces) + 2 * FLOAT + 2 * FLOAT


class Family(ABC):
    """One ``AlgoSpec.network``: its networks and optimizers, the working memory of one update and the
    batch it copies to the device."""

    network: ClassVar[str]               # the AlgoSpec.network value it answers for
    has_buffer: ClassVar[bool] = True    # keeps transitions in a rollout or replay buffer (ARS: none)
    cudnn: ClassVar[bool] = False        # runs cuDNN kernels on CUDA whatever the policy (an LSTM); a CNN always does

    @abstractmethod
    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        """The networks SB3 builds for ``cfg`` and the optimizers that step them."""

    @abstractmethod
    def activation_bytes(self, cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape) -> tuple[int, str]:
        """Peak working memory of the largest pass, and which pass it is."""

    @abstractmethod
    def batch_copy_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        """What one update copies to the device."""

    def rollout_extra_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> tuple[int, str]:
        """What its rollout buffer keeps beyond SB3's, and a note saying so (most families: nothing)."""
        return 0, ""

    def update_knob(self, cfg: RunConfig) -> tuple[str, int] | None:
        """The setting of its section that sizes one update where a batch does not (ARS), and its value."""
        return None


class GradientFamily(Family):
    """A family trained by backpropagation on sampled batches."""

    @abstractmethod
    def graph_floats(self, cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape, saves_input: bool) -> int:
        """Floats per sample the training pass's autograd graph keeps for the MLP stacks (the CNN's are added)."""

    @abstractmethod
    def cnn_passes(self, cfg: RunConfig) -> int:
        """How many CNN graphs the training pass keeps (once when shared, else one per network calling it)."""

    @abstractmethod
    def sample_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        """Device bytes of one sampled row."""

    def loss_floats(self, spaces: EnvSpaces) -> int:
        """Floats per sample of the loss and distribution bookkeeping."""
        return 3 * spaces.action_logits + 16

    def activation_bytes(self, cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape) -> tuple[int, str]:
        """Per sample, the graph keeps each hidden layer's output (twice for activations that save
        their input) and each head's output; backward adds two layer-wide gradient buffers; loss
        and distribution bookkeeping adds a few floats per action. The largest of: the training
        pass (``train_batch`` samples), inference on ``n_envs`` observations, and the optimizer
        step's foreach temporaries (one parameter-sized buffer of the largest optimizer).
        """
        saves_input = resolved_activation(cfg) in SAVES_INPUT
        widest = max((max(s[1:]) for n in shape.networks for s in n.stacks), default=1)
        extras = self.loss_floats(spaces)
        graph = self.graph_floats(cfg, spaces, shape, saves_input)
        if shape.cnn is not None:
            graph += shape.cnn.activations * self.cnn_passes(cfg)
        batch = train_batch(cfg)
        train = FLOAT * batch * (graph + 2 * widest + extras)
        infer = FLOAT * cfg.runtime.n_envs * (2 * widest + spaces.obs_features + extras)
        step = FLOAT * max((o.params for o in shape.optimizers), default=0)
        if train >= infer and train >= step:
            return train, f"training pass on {batch:,} samples"
        if infer >= step:
            return infer, f"inference on {cfg.runtime.n_envs:,} envs"
        return step, "optimizer step temporaries"

    def batch_copy_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        """Device copies of one sampled batch (``to_torch``) plus float copies of non-float obs."""
        return train_batch(cfg) * self.sample_bytes(cfg, spaces)
