"""What SB3's off-policy actor-critics share (SAC, TD3 and DDPG; sb3-contrib's TQC and CrossQ): an actor,
``n_critics`` Q stacks on obs+action (2; DDPG 1) with a ``critic_target`` copy (no gradients, no
optimizer), each network with its own NatureCNN (CnnPolicy) unless the critic shares the actor's,
and batches sampled from the replay buffer."""

from __future__ import annotations

from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.estimate.families.family import GradientFamily, PolicyInputs, replay_sample_bytes, stack_graph_floats
from core.estimate.networks import ModelShape, Network, network


class ActorQCritics(GradientFamily):
    """The critics, the training graph and the replay sample of an off-policy actor-critic; the actor is its family's."""

    def critic_outputs(self, cfg: RunConfig) -> int:
        """Outputs of each Q stack (TQC: its quantiles)."""
        return 1

    def critics(self, cfg: RunConfig, spaces: EnvSpaces, inputs: PolicyInputs) -> tuple[Network, Network]:
        """The critic (``n_critics`` Q stacks) and its target."""
        assert cfg.spec is not None
        qf, cnn = tuple(inputs.arch.get("qf", [])), inputs.cnn
        n_critics = cfg.policy.n_critics or cfg.spec.default_critics
        q_stacks = [(inputs.features + spaces.action_dim, *qf, self.critic_outputs(cfg))] * n_critics
        critic_cnn = (cnn.params, cnn.tensors) if cnn and not cfg.policy.share_features_extractor else (0, 0)
        critic = network("critic", q_stacks, extra_params=critic_cnn[0], extra_tensors=critic_cnn[1])
        target = network("critic_target", q_stacks, trainable=False, extra_params=critic_cnn[0],
                         extra_tensors=critic_cnn[1])
        return critic, target

    def graph_floats(self, cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape, saves_input: bool) -> int:
        """The actor's graph and one critic call of its Q stacks: the actor's graph outlives the critic loss."""
        actor = shape.network("actor")
        return (sum(stack_graph_floats(s, saves_input) for s in actor.stacks) + spaces.action_dim
                + self.critic_graph_floats(spaces, shape.network("critic"), saves_input))

    def critic_graph_floats(self, spaces: EnvSpaces, critic: Network, saves_input: bool) -> int:
        """th.cat(features, actions) feeding the critics, and their stacks."""
        return spaces.obs_features + spaces.action_dim + sum(stack_graph_floats(s, saves_input) for s in critic.stacks)

    def cnn_passes(self, cfg: RunConfig) -> int:
        return 2  # in the actor and in the critic

    def loss_floats(self, spaces: EnvSpaces) -> int:
        return super().loss_floats(spaces) + 4 * spaces.action_dim

    def sample_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        return replay_sample_bytes(spaces)
