"""The engines a run trains with: ``sb3`` (PyTorch, stable-baselines3) or ``sbx`` (JAX, SBX), and what SBX can run.

SBX is SB3's own JAX re-implementation: the same API, ``.zip`` files, VecEnvs, callbacks and logger, about three
times the steps per second on PPO and SAC. It has fewer algorithms and options, so a config the engine cannot run
is refused when it is validated, naming the field and the fix (``engine_issues``), before any launch.

What each SBX class takes is a table here, not an import: validation stays light (importing sbx loads jax, seconds)
and works where sbx is not installed. ``tests/core/config/test_engines.py`` compares the table with the installed
sbx's constructors, so a new sbx version that changes them fails a test instead of a night.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from core.config.algorithms.off_policy import ReplayParams
from core.config.algorithms.spec import AlgoSpec
from core.config.env_spec import EnvSpec
from core.config.errors import FieldIssue
from core.config.fields import LinearSchedule, Section, field_meta, fields_where
from core.config.policy_params import PolicyParams
from core.util.imports import installed


class _Runtime(Protocol):
    @property
    def engine(self) -> str: ...


class EngineConfig(Protocol):
    """What the engine checks read of a ``RunConfig`` (``core.config.schema`` calls them, so this module does not
    import it)."""

    @property
    def spec(self) -> AlgoSpec | None: ...

    @property
    def params(self) -> Section: ...

    @property
    def runtime(self) -> _Runtime: ...

    @property
    def policy(self) -> PolicyParams: ...

    @property
    def env(self) -> EnvSpec: ...

ENGINES: Final = ("sb3", "sbx")
Engine = Literal["sb3", "sbx"]
JAX_FIX: Final = 'pip install "rlpanel[jax]"'
BACK: Final = "or set runtime.engine: sb3"  # every SBX refusal's other way out

# rlpanel's activation names as flax.linen's functions (all of ACTIVATIONS but auto; a test checks each exists)
FLAX_ACTIVATIONS: Final = {"tanh": "tanh", "relu": "relu", "elu": "elu", "leaky_relu": "leaky_relu", "gelu": "gelu",
                           "silu": "silu"}
# rlpanel's optimizer names as optax's (rmsprop_tf_like is SB3's TF1 port: optax has none)
OPTAX_OPTIMIZERS: Final = {"adam": "adam", "adamw": "adamw", "rmsprop": "rmsprop", "sgd": "sgd"}
# optax's optimizers that take each optimizer_kwargs key rlpanel passes (adam's L2 in torch has no optax twin)
OPTAX_TAKES: Final = {"eps": ("adam", "adamw", "rmsprop"), "weight_decay": ("adamw",)}


@dataclass(frozen=True)
class SbxAlgo:
    """One SBX class as rlpanel uses it. ``kwargs``, ``policy_kwargs`` and ``policy_kinds`` are the installed sbx's
    (its constructor's keywords, its MlpPolicy's, its ``policy_aliases``: a test checks them); the rest is what its
    code does with them, read from sbx 0.28's source."""

    cls: str                             # "sbx:PPO", imported by the worker only
    kwargs: frozenset[str]               # the constructor's keyword arguments (but policy, env)
    policy_kwargs: frozenset[str]        # its MlpPolicy's (but the spaces and lr_schedule)
    policy_kinds: tuple[str, ...]        # its policy names
    schedules: frozenset[str] = frozenset()  # the fields it changes over the run (others keep their first value)
    # fields it takes with another meaning than SB3's: (field, what SBX does with it)
    differs: tuple[tuple[str, str], ...] = ()
    critic_lr: bool = False              # qf_learning_rate must be passed: its default is not learning_rate (DDPG)


_OFF_POLICY = frozenset({"learning_rate", "qf_learning_rate", "buffer_size", "learning_starts", "batch_size", "tau", "gamma",
                         "train_freq", "gradient_steps", "action_noise", "replay_buffer_class", "replay_buffer_kwargs",
                         "n_steps", "tensorboard_log", "policy_kwargs", "verbose", "seed", "device"})
_SAC_LIKE = _OFF_POLICY | {"policy_delay", "ent_coef", "target_entropy", "use_sde", "sde_sample_freq", "use_sde_at_warmup",
                           "stats_window_size", "param_resets"}
_POLICY = frozenset({"net_arch", "activation_fn", "features_extractor_class", "features_extractor_kwargs",
                     "normalize_images", "optimizer_class", "optimizer_kwargs"})
_ACTOR_CRITIC = _POLICY | {"dropout_rate", "layer_norm", "use_sde", "n_critics", "share_features_extractor"}
_SQUASHED = _ACTOR_CRITIC | {"log_std_init", "use_expln", "clip_mean"}
# SBX's "gSDE" keeps one noise sample between resamples; it is not SB3's state-dependent exploration
_GSDE = "SBX's gSDE only reuses one noise sample, it has no state-dependent exploration"
_SDE_FIELDS = (("use_sde", _GSDE),)  # sde_sample_freq and use_sde_at_warmup do nothing without it, in SB3 too

SBX_ALGORITHMS: Final[dict[str, SbxAlgo]] = {
    "PPO": SbxAlgo(
        "sbx:PPO",
        frozenset({"learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range",
                   "clip_range_vf", "normalize_advantage", "ent_coef", "vf_coef", "max_grad_norm", "use_sde",
                   "sde_sample_freq", "rollout_buffer_class", "rollout_buffer_kwargs", "target_kl", "tensorboard_log",
                   "policy_kwargs", "verbose", "seed", "device"}),
        _POLICY | {"ortho_init", "log_std_init", "use_sde", "use_expln", "clip_mean", "share_features_extractor",
                   "actor_class", "critic_class"},
        ("MlpPolicy", "CnnPolicy"),
        schedules=frozenset({"learning_rate", "clip_range"}),
        differs=(*_SDE_FIELDS, ("target_kl", "SBX's PPO adapts the learning rate to target_kl instead of stopping the "
                                             "epoch early as SB3 does"))),
    "SAC": SbxAlgo("sbx:SAC", _SAC_LIKE, _SQUASHED | {"actor_class", "vector_critic_class"},
                   ("MlpPolicy", "SimbaPolicy", "MultiInputPolicy"), frozenset({"learning_rate"}), _SDE_FIELDS),
    "TD3": SbxAlgo("sbx:TD3", _OFF_POLICY | {"policy_delay", "target_policy_noise", "target_noise_clip", "stats_window_size",
                                             "param_resets"},
                   _ACTOR_CRITIC, ("MlpPolicy", "MultiInputPolicy")),
    "DDPG": SbxAlgo("sbx:DDPG", _OFF_POLICY, _ACTOR_CRITIC, ("MlpPolicy",), critic_lr=True),
    "DQN": SbxAlgo("sbx:DQN", (_OFF_POLICY - {"qf_learning_rate", "action_noise"})
                   | {"target_update_interval", "exploration_fraction", "exploration_initial_eps", "exploration_final_eps",
                      "optimize_memory_usage"},
                   _POLICY, ("MlpPolicy", "CnnPolicy")),
    "TQC": SbxAlgo("sbx:TQC", _SAC_LIKE | {"top_quantiles_to_drop_per_net"},
                   _SQUASHED | {"top_quantiles_to_drop_per_net", "n_quantiles", "actor_class", "critic_class"},
                   ("MlpPolicy", "SimbaPolicy", "MultiInputPolicy"), frozenset({"learning_rate"}), _SDE_FIELDS),
    "CrossQ": SbxAlgo("sbx:CrossQ", _SAC_LIKE - {"tau"},
                      _SQUASHED | {"batch_norm", "batch_norm_actor", "batch_norm_momentum", "renorm_warmup_steps",
                                   "actor_class", "vector_critic_class"},
                      ("MlpPolicy", "SimbaPolicy", "MultiInputPolicy"), differs=_SDE_FIELDS),
}

# The ``policy`` settings SBX's policies honour as SB3's do (beyond net_arch, activation, kind and the optimizer).
# use_expln, full_std and squash_output are gSDE's; share_features_extractor is decided by SBX itself (CNN only).
SBX_POLICY_OPTIONS: Final = frozenset({"log_std_init", "ortho_init", "n_critics"})
# the policy settings read elsewhere in this check
_POLICY_HANDLED: Final = frozenset({"net_arch", "activation", "kind", "optimizer", "optimizer_eps", "weight_decay",
                                    "features_extractor", "features_extractor_kwargs", "policy_class"})


def sbx_installed() -> bool:
    """Whether sbx (and jax) can be imported here, asked without importing them (jax takes seconds)."""
    return installed("sbx") and installed("jax")


def missing_engine_text() -> str:
    return f"engine sbx needs the sbx-rl package (JAX), which is not installed here: {JAX_FIX}, {BACK}"


def engine_issues(cfg: EngineConfig) -> list[FieldIssue]:
    """What the config's engine cannot run, each naming the field and the fix; none for ``sb3`` and for a baseline
    (it plays without a network). Static: the same on every machine, sbx installed or not (``check_engine`` says that)."""
    spec = cfg.spec
    if cfg.runtime.engine == "sb3" or spec is None:
        return []
    sbx = SBX_ALGORITHMS.get(spec.name)
    if sbx is None:
        return [FieldIssue("algo", f"{spec.name} has no SBX (JAX) version; SBX trains {_either(list(SBX_ALGORITHMS))}: "
                                   f"pick one of them, {BACK}")]
    return _section_issues(cfg, sbx) + _policy_issues(cfg, sbx)


def _section_issues(cfg: EngineConfig, sbx: SbxAlgo) -> list[FieldIssue]:
    """The algorithm's fields SBX's class lacks, takes with another meaning, or keeps constant though scheduled."""
    spec = cfg.spec
    assert spec is not None
    params, defaults = cfg.params, spec.params()
    who, section = f"SBX's {spec.name}", spec.section
    differs = dict(sbx.differs)
    issues: list[FieldIssue] = []
    for name in fields_where(spec.params, sb3="model") + fields_where(spec.params, sb3="policy"):
        value, default = getattr(params, name), getattr(defaults, name)
        path = f"{section}.{name}"
        if name in differs and value != default:
            issues.append(FieldIssue(path, f"{differs[name]}: set it back to {_shown(default)}, {BACK}"))
        elif name not in sbx.kwargs | sbx.policy_kwargs and value != default:
            issues.append(FieldIssue(path, f"{who} has no {name}: set it back to {_shown(default)}, {BACK}"))
        elif field_meta(spec.params, name).schedule and isinstance(value, LinearSchedule) and name not in sbx.schedules:
            issues.append(FieldIssue(path, f"{who} keeps the {name} it starts with: set a constant, {BACK}"))
    if isinstance(params, ReplayParams) and params.replay_buffer == "her":
        issues.append(FieldIssue(f"{section}.replay_buffer", f"{who} trains with the plain replay buffer here, not HER: "
                                                             f"set it back to default, {BACK}"))
    return issues


def _policy_issues(cfg: EngineConfig, sbx: SbxAlgo) -> list[FieldIssue]:
    """The ``policy`` settings SBX's policy cannot build: the user's own torch network, a policy kind it lacks, an
    optimizer or option without an optax or flax twin."""
    policy, spec = cfg.policy, cfg.spec
    assert spec is not None
    defaults = type(policy)()
    who = f"SBX's {spec.name}"
    issues: list[FieldIssue] = []
    for name in ("features_extractor", "policy_class"):
        if getattr(policy, name):
            path = "policy.class" if name == "policy_class" else f"policy.{name}"
            issues.append(FieldIssue(path, f"your own network is a torch module and SBX builds its networks in JAX (flax): "
                                           f"clear {path}, {BACK}"))
    if policy.kind != "auto" and policy.kind not in sbx.policy_kinds:
        issues.append(FieldIssue("policy.kind", f"{who} has {_either(list(sbx.policy_kinds))}, not {policy.kind}: use auto or "
                                                f"MlpPolicy, {BACK}"))
    for name in type(policy).model_fields:
        value = getattr(policy, name)
        if name in _POLICY_HANDLED or name in SBX_POLICY_OPTIONS & sbx.policy_kwargs or value == getattr(defaults, name):
            continue
        issues.append(FieldIssue(f"policy.{name}", f"{who} policy does not take {name}: set it back to "
                                                   f"{_shown(getattr(defaults, name))}, {BACK}"))
    optimizer = str(policy.optimizer)
    if optimizer != "auto" and optimizer not in OPTAX_OPTIMIZERS:
        issues.append(FieldIssue("policy.optimizer", f"{optimizer} has no optax version for SBX: use "
                                                     f"{', '.join(OPTAX_OPTIMIZERS)} or auto, {BACK}"))
        return issues
    used = "adam" if optimizer == "auto" else optimizer  # every SBX policy's own is optax's adam
    for path, key, set_ in (("policy.optimizer_eps", "eps", policy.optimizer_eps is not None),
                            ("policy.weight_decay", "weight_decay", bool(policy.weight_decay))):
        if set_ and used not in OPTAX_TAKES[key]:
            fix = "set policy.optimizer: adamw" if key == "weight_decay" else f"use {_either(list(OPTAX_TAKES[key]))}"
            issues.append(FieldIssue(path, f"optax's {used} has no {key}: {fix}, {BACK}"))
    return issues


def _either(names: list[str]) -> str:
    """``PPO, SAC or TD3``."""
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


def _shown(value: Any) -> str:
    return "empty" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def check_engine(cfg: EngineConfig, obs_image: bool = False, obs_dict: bool = False) -> list[FieldIssue]:
    """At launch (``core.config.spaces.check_spaces``): sbx installed here for an ``sbx`` run, and the policy 'auto'
    picks from the observations (images: CnnPolicy, dicts: MultiInputPolicy) one that SBX's class has."""
    spec = cfg.spec
    if cfg.runtime.engine == "sb3" or spec is None:
        return []
    if not sbx_installed():
        return [FieldIssue("runtime.engine", missing_engine_text())]
    sbx = SBX_ALGORITHMS.get(spec.name)
    kind = "MultiInputPolicy" if obs_dict else "CnnPolicy" if obs_image else "MlpPolicy"
    if sbx is None or cfg.policy.kind != "auto" or kind in sbx.policy_kinds:
        return []
    what = "dict" if obs_dict else "image"
    return [FieldIssue("policy.kind", f"{cfg.env.label} has {what} observations, which call for {kind}, and SBX's "
                                      f"{spec.name} has {_either(list(sbx.policy_kinds))} only: {BACK.removeprefix('or ')}")]
