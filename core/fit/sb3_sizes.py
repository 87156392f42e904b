"""The networks, optimizers and buffers stable-baselines3 builds for a config, counted without torch.

Mirrors SB3 2.x ``MlpPolicy`` construction (read from its source, not guessed):

- PPO/A2C ``ActorCriticPolicy``: FlattenExtractor (no parameters, shared), ``MlpExtractor``
  pi and vf stacks, ``action_net`` Linear(latent_pi, logits), ``value_net`` Linear(latent_vf, 1),
  and for Box actions a ``log_std`` parameter of ``action_dim``. One optimizer over everything:
  Adam (PPO; A2C with ``use_rms_prop: false``) or RMSprop(alpha=0.99, eps, momentum 0, not
  centered: one ``square_avg`` per parameter) for A2C.
- SAC: actor (latent_pi stack, ``mu`` and ``log_std`` Linear heads; with gSDE ``log_std`` is a
  (latent, action_dim) parameter), critic of ``n_critics`` = 2 Q stacks on obs+action, a
  critic_target copy (no gradients, no optimizer), separate Adam optimizers for actor and
  critic, and ``log_ent_coef`` (one float with its own Adam) when ``ent_coef`` is ``auto``.
- DQN: ``q_net`` stack ending in n_actions, a ``q_net_target`` copy, Adam over q_net.

Optimizer state is what torch keeps after the first step: Adam ``exp_avg`` + ``exp_avg_sq``
(2 x parameters), RMSprop ``square_avg`` (1 x), plus a 4-byte ``step`` scalar per parameter
tensor (on the CPU unless capturable; counted with the rest, it is a few hundred bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.config.schema import RunConfig, resolved_activation, resolved_net_arch
from core.config.spaces import EnvSpaces

FLOAT = 4  # SB3 trains in float32 (no AMP)
N_CRITICS = 2  # SACPolicy default
# Activations whose backward needs their input as well as their output (tanh and relu keep
# only their output, which the next Linear keeps anyway).
SAVES_INPUT = {"elu", "leaky_relu", "gelu", "silu"}
ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
            "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1}


def itemsize(dtype: str) -> int:
    return ITEMSIZE.get(dtype, 8)


@dataclass(frozen=True)
class Network:
    """One module SB3 holds: its sizes, parameter count and whether it trains."""

    name: str
    params: int
    tensors: int
    trainable: bool
    stacks: tuple[tuple[int, ...], ...] = ()  # (input, hidden..., output) of each MLP inside


@dataclass(frozen=True)
class Optimizer:
    name: str
    kind: str  # "adam" | "rmsprop"
    params: int
    tensors: int

    @property
    def state_bytes(self) -> int:
        moments = 2 if self.kind == "adam" else 1
        return moments * FLOAT * self.params + FLOAT * self.tensors


@dataclass(frozen=True)
class ModelShape:
    networks: tuple[Network, ...]
    optimizers: tuple[Optimizer, ...]

    @property
    def param_count(self) -> int:
        """Every parameter SB3 holds: ``policy.parameters()`` plus SAC's ``log_ent_coef``."""
        return sum(n.params for n in self.networks)

    @property
    def trainable_count(self) -> int:
        return sum(n.params for n in self.networks if n.trainable)

    @property
    def optimizer_bytes(self) -> int:
        return sum(o.state_bytes for o in self.optimizers)

    def network(self, name: str) -> Network:
        return next(n for n in self.networks if n.name == name)


def _stack(sizes: tuple[int, ...]) -> tuple[int, int]:
    """Parameters and tensors of Linear layers between consecutive ``sizes``."""
    params = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
    return params, 2 * (len(sizes) - 1)


def _network(name: str, stacks: list[tuple[int, ...]], trainable: bool = True, extra_params: int = 0,
             extra_tensors: int = 0) -> Network:
    params = sum(_stack(s)[0] for s in stacks) + extra_params
    tensors = sum(_stack(s)[1] for s in stacks) + extra_tensors
    return Network(name, params, tensors, trainable, tuple(stacks))


def model_shape(cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
    arch = resolved_net_arch(cfg)
    feats = spaces.obs_features
    network = _network_family(cfg)
    if network == "actor_critic":
        pi, vf = tuple(arch.get("pi", [])), tuple(arch.get("vf", []))
        box = spaces.action_kind == "box"
        # the mlp_extractor's pi stack and the action head are one chain for activations
        actor = _network("actor", [(feats, *pi, spaces.action_logits)], extra_params=spaces.action_dim if box else 0,
                         extra_tensors=1 if box else 0)
        critic = _network("critic", [(feats, *vf, 1)])
        rms = bool(getattr(cfg.params, "use_rms_prop", False))
        opt = Optimizer("policy", "rmsprop" if rms else "adam", actor.params + critic.params, actor.tensors + critic.tensors)
        return ModelShape((actor, critic), (opt,))
    if network == "sac":
        pi, qf = tuple(arch.get("pi", [])), tuple(arch.get("qf", []))
        act = spaces.action_dim
        latent = pi[-1] if pi else feats
        if cfg.params.use_sde:  # mu head + a (latent, action_dim) log_std parameter (full_std)
            actor = _network("actor", [(feats, *pi, act)], extra_params=latent * act, extra_tensors=1)
        else:  # mu and log_std heads
            actor = _network("actor", [(feats, *pi, act)], extra_params=latent * act + act, extra_tensors=2)
        q_stacks = [(feats + act, *qf, 1)] * N_CRITICS
        critic = _network("critic", q_stacks)
        target = _network("critic_target", q_stacks, trainable=False)
        nets = [actor, critic, target]
        opts = [Optimizer("actor", "adam", actor.params, actor.tensors),
                Optimizer("critic", "adam", critic.params, critic.tensors)]
        if isinstance(cfg.params.ent_coef, str):  # "auto" / "auto_0.1": a learned log_ent_coef
            nets.append(Network("log_ent_coef", 1, 1, True))
            opts.append(Optimizer("ent_coef", "adam", 1, 1))
        return ModelShape(tuple(nets), tuple(opts))
    qf = tuple(arch.get("qf", []))
    stack = (feats, *qf, spaces.action_logits)
    q_net = _network("q_net", [stack])
    target = _network("q_net_target", [stack], trainable=False)
    return ModelShape((q_net, target), (Optimizer("q_net", "adam", q_net.params, q_net.tensors),))


# --- working memory of one update -------------------------------------------------------------

def train_batch(cfg: RunConfig) -> int:
    """Samples in one forward/backward pass: PPO's minibatch, A2C's whole rollout, SAC/DQN's batch."""
    assert cfg.spec is not None, "a baseline trains nothing"
    return cfg.spec.train_batch(cfg.params, cfg.runtime.n_envs)  # PPO's 'auto' is resolved by validation


def _network_family(cfg: RunConfig) -> str:
    assert cfg.spec is not None, "a baseline holds no network"
    return cfg.spec.network


def _graph_floats(stack: tuple[int, ...], saves_input: bool) -> int:
    """Floats per sample the autograd graph keeps for one MLP stack (input excluded)."""
    hidden = stack[1:-1]
    return sum(hidden) * (2 if saves_input else 1) + stack[-1]


def activation_bytes(cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape) -> tuple[int, str]:
    """Peak working memory of the largest pass, and which pass it is.

    Per sample, the graph keeps each hidden layer's output (twice for activations that save
    their input) and each head's output; backward adds two layer-wide gradient buffers; loss
    and distribution bookkeeping adds a few floats per action. The largest of: the training
    pass (``train_batch`` samples: PPO/A2C actor+critic; SAC actor + one critic call of
    ``n_critics`` Q stacks, since the actor's graph outlives the critic loss; DQN q_net),
    inference on ``n_envs`` observations, and the optimizer step's foreach temporaries
    (one parameter-sized buffer of the largest optimizer).
    """
    saves_input = resolved_activation(cfg) in SAVES_INPUT
    widest = max(max(s[1:]) for n in shape.networks for s in n.stacks)
    extras = 3 * spaces.action_logits + 16
    network = _network_family(cfg)
    if network == "actor_critic":
        graph = sum(_graph_floats(s, saves_input) for n in shape.networks for s in n.stacks)
    elif network == "sac":
        actor = shape.network("actor")
        critic = shape.network("critic")
        graph = (sum(_graph_floats(s, saves_input) for s in actor.stacks) + spaces.action_dim
                 + spaces.obs_features + spaces.action_dim  # th.cat(features, actions) feeding the critics
                 + sum(_graph_floats(s, saves_input) for s in critic.stacks))
        extras += 4 * spaces.action_dim
    else:
        graph = sum(_graph_floats(s, saves_input) for s in shape.network("q_net").stacks)
    batch = train_batch(cfg)
    train = FLOAT * batch * (graph + 2 * widest + extras)
    infer = FLOAT * cfg.runtime.n_envs * (2 * widest + spaces.obs_features + extras)
    step = FLOAT * max(o.params for o in shape.optimizers)
    if train >= infer and train >= step:
        return train, f"training pass on {batch:,} samples"
    if infer >= step:
        return infer, f"inference on {cfg.runtime.n_envs:,} envs"
    return step, "optimizer step temporaries"


def batch_copy_bytes(cfg: RunConfig, spaces: EnvSpaces) -> int:
    """Device copies of one sampled batch (``to_torch``) plus float copies of non-float obs."""
    obs = spaces.obs_size * itemsize(spaces.obs_dtype)
    as_float = FLOAT * spaces.obs_features if (spaces.obs_dtype != "float32" or spaces.obs_kind != "box") else 0
    if _network_family(cfg) == "actor_critic":
        # obs, actions cast to float32, old values, old log-probs, advantages, returns, normalized advantages
        long_actions = 8 * spaces.action_dim if spaces.action_kind != "box" else 0
        per = obs + as_float + FLOAT * spaces.action_dim + long_actions + 5 * FLOAT
    else:
        act = spaces.action_dim * replay_action_itemsize(spaces)
        # obs, next_obs, actions, dones, rewards (+ float copies of both observations)
        per = 2 * (obs + as_float) + act + 2 * FLOAT + 2 * FLOAT
    return train_batch(cfg) * per


# --- host buffers ------------------------------------------------------------------------------

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
