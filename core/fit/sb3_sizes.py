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
- TD3 and DDPG: actor (pi stack ending in action_dim, tanh) and ``actor_target``, ``n_critics``
  Q stacks (2; DDPG 1) and ``critic_target``; Adam for actor and critic.
- DQN: ``q_net`` stack ending in n_actions, a ``q_net_target`` copy, Adam over q_net.
- CnnPolicy: a NatureCNN (three convolutions and a Linear to 512 features) in front of every
  network that owns one: once for PPO/A2C (shared), in each of the actor, critic and their targets
  off-policy (unless the critic shares the actor's), in q_net and q_net_target for DQN.

Optimizer state is what torch keeps after the first step: Adam ``exp_avg`` + ``exp_avg_sq``
(2 x parameters), RMSprop ``square_avg`` (1 x), plus a 4-byte ``step`` scalar per parameter
tensor (on the CPU unless capturable; counted with the rest, it is a few hundred bytes).
"""

from __future__ import annotations

from core.config.schema import RunConfig, resolved_activation, resolved_net_arch
from core.config.spaces import EnvSpaces
from core.fit import contrib_sizes as contrib
from core.fit.networks import FLOAT, SAVES_INPUT, Cnn, ModelShape, Network, Optimizer, itemsize, nature_cnn, network


def policy_kind(cfg: RunConfig, spaces: EnvSpaces) -> str:
    """The SB3 policy the worker builds: the config's, or chosen from the observations."""
    kind = str(cfg.policy.kind)
    if kind != "auto":
        return kind
    if spaces.obs_kind == "dict":
        return "MultiInputPolicy"
    return "CnnPolicy" if spaces.obs_image else "MlpPolicy"


def _optimizer_kind(cfg: RunConfig) -> str:
    chosen = str(cfg.policy.optimizer)
    if chosen != "auto":
        return chosen
    return "rmsprop" if getattr(cfg.params, "use_rms_prop", False) else "adam"


def model_shape(cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
    cnn = nature_cnn(spaces.image_chw) if policy_kind(cfg, spaces) == "CnnPolicy" and spaces.obs_image else None
    arch = resolved_net_arch(cfg, cnn=cnn is not None)
    feats = cnn.features if cnn else spaces.obs_features
    family = _network_family(cfg)
    opt_kind = _optimizer_kind(cfg)
    share = cfg.policy.share_features_extractor
    if family == "actor_critic":
        return _actor_critic(cfg, spaces, arch, feats, cnn, opt_kind, share is not False)
    if family == "recurrent":  # the pi and vf stacks start at the LSTM's output
        base = _actor_critic(cfg, spaces, arch, cfg.params.lstm_hidden_size, cnn, opt_kind, share is not False)
        return contrib.recurrent_shape(cfg, base, feats)
    if family in ("sac", "td3", "tqc"):
        return _actor_critics(cfg, spaces, arch, feats, cnn, opt_kind, bool(share))
    if family == "crossq":
        return contrib.crossq_shape(cfg, _actor_critics(cfg, spaces, arch, feats, cnn, opt_kind, bool(share)))
    if family == "ars":
        return contrib.ars_shape(cfg, spaces, arch.get("qf", []), feats)
    qf = tuple(arch.get("qf", []))
    stack = (feats, *qf, spaces.action_logits)
    extra = (cnn.params, cnn.tensors) if cnn else (0, 0)
    q_net = network("q_net", [stack], extra_params=extra[0], extra_tensors=extra[1])
    target = network("q_net_target", [stack], trainable=False, extra_params=extra[0], extra_tensors=extra[1])
    return ModelShape((q_net, target), (Optimizer("q_net", opt_kind, q_net.params, q_net.tensors),), cnn)


def _actor_critic(cfg: RunConfig, spaces: EnvSpaces, arch: dict[str, list[int]], feats: int, cnn: Cnn | None,
                  opt_kind: str, share: bool) -> ModelShape:
    """ActorCriticPolicy: pi and vf stacks with their heads; the CNN once (shared) or twice.

    ``feats`` is what the stacks take (RecurrentPPO: the LSTM's output)."""
    pi, vf = tuple(arch.get("pi", [])), tuple(arch.get("vf", []))
    box = spaces.action_kind == "box"
    latent = pi[-1] if pi else feats
    log_std = 0
    if box:  # gSDE: a (latent, action_dim) matrix (full_std) or (latent, 1); else one per action
        log_std = (latent * (spaces.action_dim if cfg.policy.full_std else 1) if getattr(cfg.params, "use_sde", False)
                   else spaces.action_dim)
    cnn_params, cnn_tensors = (cnn.params, cnn.tensors) if cnn else (0, 0)
    # the mlp_extractor's pi stack and the action head are one chain for activations
    actor = network("actor", [(feats, *pi, spaces.action_logits)], extra_params=log_std + cnn_params,
                     extra_tensors=(1 if box else 0) + cnn_tensors)
    critic = network("critic", [(feats, *vf, 1)], extra_params=0 if share else cnn_params,
                      extra_tensors=0 if share else cnn_tensors)
    opt = Optimizer("policy", opt_kind, actor.params + critic.params, actor.tensors + critic.tensors)
    if cfg.spec is not None and cfg.spec.natural_gradient:  # TRPO: the optimizer only ever steps the critic
        opt = Optimizer("policy (critic steps)", opt_kind, critic.params, critic.tensors)
    return ModelShape((actor, critic), (opt,), cnn)


def _actor_critics(cfg: RunConfig, spaces: EnvSpaces, arch: dict[str, list[int]], feats: int, cnn: Cnn | None,
                   opt_kind: str, share: bool) -> ModelShape:
    """SAC (a Gaussian actor, critics and their target, a learned entropy coefficient) and TD3/DDPG
    (a deterministic actor and its target, critics and their targets), each network with its own
    CNN unless the critic shares the actor's."""
    assert cfg.spec is not None
    pi, qf = tuple(arch.get("pi", [])), tuple(arch.get("qf", []))
    act = spaces.action_dim
    latent = pi[-1] if pi else feats
    n_critics = cfg.policy.n_critics or cfg.spec.default_critics
    cnn_params, cnn_tensors = (cnn.params, cnn.tensors) if cnn else (0, 0)
    q_stacks = [(feats + act, *qf, getattr(cfg.params, "n_quantiles", 1))] * n_critics  # TQC: quantiles per critic
    critic_cnn = (0, 0) if share else (cnn_params, cnn_tensors)
    critic = network("critic", q_stacks, extra_params=critic_cnn[0], extra_tensors=critic_cnn[1])
    target = network("critic_target", q_stacks, trainable=False, extra_params=critic_cnn[0], extra_tensors=critic_cnn[1])
    if cfg.spec.network == "td3":
        actor = network("actor", [(feats, *pi, act)], extra_params=cnn_params, extra_tensors=cnn_tensors)
        actor_target = network("actor_target", [(feats, *pi, act)], trainable=False, extra_params=cnn_params,
                                extra_tensors=cnn_tensors)
        # with a shared extractor the critic's optimizer steps the actor's CNN too
        critic_opt = (critic.params + (cnn_params if share else 0), critic.tensors + (cnn_tensors if share else 0))
        return ModelShape((actor, actor_target, critic, target),
                          (Optimizer("actor", opt_kind, actor.params, actor.tensors),
                           Optimizer("critic", opt_kind, *critic_opt)), cnn)
    if cfg.params.use_sde:  # mu head + a (latent, action_dim) log_std parameter (full_std)
        actor = network("actor", [(feats, *pi, act)], extra_params=latent * act + cnn_params, extra_tensors=1 + cnn_tensors)
    else:  # mu and log_std heads
        actor = network("actor", [(feats, *pi, act)], extra_params=latent * act + act + cnn_params,
                         extra_tensors=2 + cnn_tensors)
    nets = [actor, critic, target]
    opts = [Optimizer("actor", opt_kind, actor.params, actor.tensors),
            Optimizer("critic", opt_kind, critic.params, critic.tensors)]
    if isinstance(cfg.params.ent_coef, str):  # "auto" / "auto_0.1": a learned log_ent_coef (always Adam)
        nets.append(Network("log_ent_coef", 1, 1, True))
        opts.append(Optimizer("ent_coef", "adam", 1, 1))
    return ModelShape(tuple(nets), tuple(opts), cnn)


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
    widest = max((max(s[1:]) for n in shape.networks for s in n.stacks), default=1)
    extras = 3 * spaces.action_logits + 16
    family = _network_family(cfg)
    if family == "ars":  # no gradients: the perturbed weight vectors of one update
        return contrib.ars_update_bytes(cfg, shape), f"{cfg.params.n_delta} perturbations of the policy's weights"
    graph = _graph(cfg, spaces, shape, family, saves_input)
    if family in ("sac", "td3", "tqc", "crossq"):
        extras += 4 * spaces.action_dim
    batch = train_batch(cfg)
    train = FLOAT * batch * (graph + 2 * widest + extras)
    infer = FLOAT * cfg.runtime.n_envs * (2 * widest + spaces.obs_features + extras)
    step = FLOAT * max((o.params for o in shape.optimizers), default=0)
    if train >= infer and train >= step:
        return train, f"training pass on {batch:,} samples"
    if infer >= step:
        return infer, f"inference on {cfg.runtime.n_envs:,} envs"
    return step, "optimizer step temporaries"


def _graph(cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape, family: str, saves_input: bool) -> int:
    """Floats per sample the training pass's autograd graph keeps."""
    if family in ("actor_critic", "recurrent"):
        graph = sum(_graph_floats(s, saves_input) for n in shape.networks for s in n.stacks)
        if family == "recurrent":
            graph += contrib.lstm_graph_floats(cfg)
    elif family in ("sac", "td3", "tqc", "crossq"):
        actor = shape.network("actor")
        critic = shape.network("critic")
        critic_graph = (spaces.obs_features + spaces.action_dim  # th.cat(features, actions) feeding the critics
                        + sum(_graph_floats(s, saves_input) for s in critic.stacks))
        if family == "crossq":  # current and next transitions in one joint pass, batch renorm keeping its input
            critic_graph = 2 * (critic_graph + sum(d for s in critic.stacks for d in s[:-1]))
        graph = sum(_graph_floats(s, saves_input) for s in actor.stacks) + spaces.action_dim + critic_graph
    else:
        graph = sum(_graph_floats(s, saves_input) for s in shape.network("q_net").stacks)
    if shape.cnn is not None:  # the CNN's graph: once when shared by PPO/A2C, else in the actor and the critic
        shared = family in ("actor_critic", "recurrent") and cfg.policy.share_features_extractor is not False
        graph += shape.cnn.activations * (1 if shared or family == "q_network" else 2)
    return graph


def batch_copy_bytes(cfg: RunConfig, spaces: EnvSpaces) -> int:
    """Device copies of one sampled batch (``to_torch``) plus float copies of non-float obs."""
    obs = spaces.obs_size * itemsize(spaces.obs_dtype)
    as_float = FLOAT * spaces.obs_features if (spaces.obs_dtype != "float32" or spaces.obs_kind != "box") else 0
    family = _network_family(cfg)
    if family == "ars":  # no sampled batch: each step's observations only
        return cfg.runtime.n_envs * (obs + as_float)
    if family in ("actor_critic", "recurrent"):
        # obs, actions cast to float32, old values, old log-probs, advantages, returns, normalized advantages
        long_actions = 8 * spaces.action_dim if spaces.action_kind != "box" else 0
        per = obs + as_float + FLOAT * spaces.action_dim + long_actions + 5 * FLOAT
        rows, _ = contrib.rollout_extra_bytes(cfg, spaces)  # LSTM states or action masks, per sample
        per += rows // max(cfg.params.n_steps * cfg.runtime.n_envs, 1)
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
