"""What rlpanel knows about one algorithm, in one place: ``AlgoSpec``.

Each algorithm module (``ppo.py``, ``sac.py``, ...) holds its hyperparameter section and one
``AlgoSpec``; the rest of rlpanel asks the spec instead of comparing algorithm names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from core.config.errors import FieldHint, FieldIssue
from core.config.fields import Section, fields_where

SPACE_KINDS = ("box", "discrete", "multidiscrete", "multibinary")
# The network families of core/estimate/families/ (FAMILIES' keys; a test checks they match): SB3's four, then sb3-contrib's.
Network = Literal["actor_critic", "sac", "td3", "q_network", "trpo", "maskable_ppo", "recurrent", "tqc", "crossq", "ars",
                  "qr_network"]
# A rule between the algorithm's section and the run's runtime and budget sections.
Rule = Callable[[Any, Any, Any], list[FieldIssue]]
# Advice on a valid config (what SB3 accepts with a warning), with the value that fixes it.
Advice = Callable[[Any, Any, Any], list[FieldHint]]


@dataclass(frozen=True)
class LearnCycle:
    """What SB3's ``learn()`` runs between two looks at the budget: it ends only between two cycles.

    SB3's loop is ``while num_timesteps < total: <one cycle>``, so a run trains whole cycles and the
    last one may cross the budget (``core.config.steps`` turns this into the steps a run takes).
    """

    steps: int | None  # env steps of one cycle, all envs together; None: episodes end it (not known ahead)
    text: str          # what the steps come in, for a sentence: "whole rollouts of 16 x 256"


def rollout_cycle(p: Any, n_envs: int) -> LearnCycle:
    """On-policy (OnPolicyAlgorithm.learn): each cycle collects a whole rollout of n_envs x n_steps."""
    return LearnCycle(n_envs * int(p.n_steps), f"whole rollouts of {n_envs} x {int(p.n_steps):,}")


@dataclass(frozen=True)
class AlgoSpec:
    """One algorithm: its section of the config, the SB3 class, and the facts the estimate uses.

    ``network`` names the policy family, which decides the networks and optimizers built; the fit
    estimate counts each in its module of ``core/estimate/families/`` (``FAMILIES``): ``actor_critic``
    (ActorCriticPolicy: pi and vf stacks, one optimizer), ``sac`` (an actor and twin Q critics with
    a target copy), ``td3`` (an actor and its target, critics and their targets) or ``q_network``
    (a Q-network and its target); sb3-contrib adds ``trpo`` (an actor-critic whose optimizer steps
    the critic only), ``maskable_ppo`` (an actor-critic whose rollouts keep action masks),
    ``recurrent`` (RecurrentPPO: LSTMs before the pi and vf stacks), ``tqc`` (SAC with quantile
    critics), ``crossq`` (SAC with batch-renormalised critics and no targets), ``ars`` (one
    policy network, no gradients) and ``qr_network`` (QR-DQN: a Q-network with n_quantiles per action).
    """

    name: str                      # the config's ``algo`` value, e.g. "PPO"
    params: type[Section]          # its section of the config (``ppo:``)
    sb3_class: str                 # "module:Class", imported by the worker only
    on_policy: bool                # rollout buffer (True) or replay buffer (False)
    network: Network               # its family: a key of core.estimate.families.FAMILIES
    action_kinds: tuple[str, ...]  # the action spaces it takes
    action_need: str               # what it needs, for messages: "a continuous (Box) action space"
    net_keys: frozenset[str]       # keys allowed in a dict net_arch (empty: a plain list only)
    default_net: tuple[int, ...]   # SB3's hidden layers when net_arch is empty
    default_activation: str        # SB3's activation when activation is auto
    train_batch: Callable[[Any, int], int]  # samples in one gradient pass, from (params, n_envs)
    cycle: Callable[[Any, int], LearnCycle]  # what learn() runs between looks at the budget, from (params, n_envs)
    rules: tuple[Rule, ...] = ()   # cross-field rules: they return issues and change nothing
    # the section with its 'auto' values resolved, from (params, runtime): a new model, never changed in place
    resolve: Callable[[Any, Any], Any] = lambda p, runtime: p
    advice: tuple[Advice, ...] = ()  # warnings with a one-click fix, on a valid config
    batch_divides_rollout: bool = False  # PPO: batch_size must divide n_envs x n_steps
    policy_keys: frozenset[str] = frozenset()  # the ``policy`` settings its SB3 policy takes (beyond net and activation)
    default_cnn_net: tuple[int, ...] | None = None  # SB3's hidden layers behind a CNN, where they differ
    default_critics: int = 2       # Q-networks of an actor-critic off-policy policy (SAC, TD3: 2; DDPG: 1)
    contrib: bool = False          # from sb3-contrib (pip install "rlpanel[contrib]")
    # SB3 policy names -> policy.kind, where the algorithm's differ (RecurrentPPO's MlpLstmPolicy is "MlpPolicy")
    policy_names: tuple[tuple[str, str], ...] = ()
    # hidden layers per net_arch key where they differ from default_net (CrossQ: pi 256x256, qf 1024x1024)
    default_nets: tuple[tuple[str, tuple[int, ...]], ...] = ()
    # the policy kinds its SB3 class has (CrossQ: MlpPolicy only)
    policy_kinds: tuple[str, ...] = ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")
    # a yes/no field of its section that picks another SB3 policy (ARS: linear_policy -> LinearPolicy)
    policy_switch: tuple[str, str] | None = None
    needs_action_masks: bool = False  # MaskablePPO: the env must have an action_masks() method
    # the optimizer its SB3 class builds itself unless given a class, as (schema name, kwargs) from (params,
    # optimizer_kwargs); None where SB3's default Adam stands: the factory passes it when optimizer_kwargs are set
    own_optimizer: Callable[[Any, dict[str, Any]], tuple[str, dict[str, Any]] | None] | None = None
    zoo: str = ""  # rl_zoo3's name (its file and --algo), where it is not the lower-case name (ppo_lstm)

    @property
    def section(self) -> str:
        """The config key of its hyperparameters: ``ppo``."""
        return self.name.lower()

    @property
    def zoo_name(self) -> str:
        """rl_zoo3's name: ``ppo``, ``ppo_lstm``."""
        return self.zoo or self.name.lower()

    @property
    def policy_params(self) -> tuple[str, ...]:
        """The fields of its section SB3 takes inside ``policy_kwargs`` (``hp(..., sb3="policy")``: LSTM sizes, quantiles)."""
        return fields_where(self.params, sb3="policy")

    def sb3_policy(self, kind: str) -> str:
        """The SB3 policy name for a resolved ``policy.kind`` (RecurrentPPO: MlpPolicy -> MlpLstmPolicy)."""
        return {k: name for name, k in self.policy_names}.get(kind, kind)

    def takes(self, action_kind: str) -> bool:
        return action_kind in self.action_kinds
