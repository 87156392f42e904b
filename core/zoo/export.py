"""``rlpanel zoo export``: a run config as an rl_zoo3 entry that rl_zoo3 itself loads and trains with.

Written for ``ExperimentManager`` as it reads an entry: ``n_timesteps``, ``policy``, ``n_envs``,
``normalize`` (a dict of VecNormalize settings), ``env_wrapper`` (``{dotted.Name: kwargs}``),
``frame_stack``, ``env_kwargs``, ``noise_type``/``noise_std``, schedules as ``lin_X``, and
``policy_kwargs`` / ``replay_buffer_kwargs`` as the ``dict(...)`` text it evaluates (with ``nn``,
``th`` and ``RMSpropTFLike`` in scope); every other key goes to the algorithm's constructor.
What an entry cannot say is returned as a note.
"""

from __future__ import annotations

from typing import Any

import yaml

from core.config.algorithms import ALGORITHMS
from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import probe_spaces
from core.zoo.translate import ACTIVATIONS, OPTIMIZERS, ZOO_ALGOS

RLPANEL_ONLY = {"auto_batch_cap", "action_noise", "action_noise_std", "replay_buffer", "her_n_sampled_goal",
                "her_goal_selection_strategy", "train_freq_unit"}
ACTIVATION_NAMES = {v: k for k, v in ACTIVATIONS.items()}
OPTIMIZER_NAMES = {v: k for k, v in OPTIMIZERS.items()}
SCHEDULED = ("learning_rate", "clip_range")


def zoo_algo_name(algo: str) -> str:
    return {v: k for k, v in ZOO_ALGOS.items()}[algo]


def _python(value: Any) -> str:
    """Plain data as the Python text rl_zoo3 evaluates."""
    if isinstance(value, dict):
        return "dict(" + ", ".join(f"{k}={_python(v)}" for k, v in value.items()) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_python(v) for v in value) + "]"
    if isinstance(value, _Code):
        return value.text
    return repr(value)


class _Code:
    """A name rl_zoo3 resolves when it evaluates the text (``nn.ReLU``)."""

    def __init__(self, text: str):
        self.text = text


def _schedule(value: Any, key: str, notes: list[str]) -> Any:
    if not isinstance(value, dict):
        return value
    if value["end"] == 0:
        return f"lin_{value['start']!r}"
    notes.append(f"{key}: rl_zoo3 has only lin_X schedules (linear down to 0); written as lin_{value['start']!r} "
                 f"instead of linear {value['start']!r} -> {value['end']!r}")
    return f"lin_{value['start']!r}"


def export_entry(cfg: RunConfig) -> tuple[dict[str, Any], list[str]]:
    """The zoo entry (a mapping for one env) and notes on what it could not express."""
    spec = cfg.spec
    if spec is None:
        raise ValueError(f"{cfg.algo} is a baseline: rl_zoo3 has no entry for it")
    notes: list[str] = []
    data = cfg.model_dump(mode="json")
    params = data[spec.section]
    defaults = spec.params().model_dump(mode="json")
    entry: dict[str, Any] = {"n_timesteps": cfg.budget.total_timesteps, "policy": _policy_name(cfg, notes),
                             "n_envs": cfg.runtime.n_envs}
    in_policy = {*spec.policy_params, *(spec.policy_switch or ())}  # written as the policy or its policy_kwargs
    for key, value in params.items():
        if key in RLPANEL_ONLY or key in in_policy or value == defaults.get(key):
            continue
        entry[key] = _schedule(value, key, notes) if key in SCHEDULED else value
    _off_policy(cfg, params, entry)
    _env(cfg, entry, notes)
    policy_kwargs = _policy_kwargs(cfg)
    if policy_kwargs:
        entry["policy_kwargs"] = _python(policy_kwargs)
    return entry, notes


def _auto_policy(cfg: RunConfig, notes: list[str]) -> str:
    """What ``policy.kind: auto`` picks for the env (the zoo names its policy): probed from its spaces."""
    try:
        spaces = probe_spaces(cfg.env)
    except ConfigError as exc:
        notes.append(f"policy: the env could not be probed here ({exc.issues[0].message}); written as MlpPolicy")
        return "MlpPolicy"
    if spaces.obs_kind == "dict":
        return "MultiInputPolicy"
    return "CnnPolicy" if spaces.obs_image else "MlpPolicy"


def _policy_name(cfg: RunConfig, notes: list[str]) -> str:
    assert cfg.spec is not None
    switch = cfg.spec.policy_switch
    if switch is not None and getattr(cfg.params, switch[1]):
        return switch[0]  # ARS: LinearPolicy
    kind = _auto_policy(cfg, notes) if cfg.policy.kind == "auto" else str(cfg.policy.kind)
    for name, mapped in cfg.spec.policy_names:  # RecurrentPPO: MlpPolicy -> MlpLstmPolicy
        if mapped == kind:
            return name
    return kind


def _off_policy(cfg: RunConfig, params: dict[str, Any], entry: dict[str, Any]) -> None:
    if params.get("train_freq_unit") == "episode":
        entry["train_freq"] = [params["train_freq"], "episode"]
    if params.get("action_noise", "none") != "none":
        entry["noise_type"] = params["action_noise"]
        entry["noise_std"] = params["action_noise_std"]
    if params.get("replay_buffer") == "her":
        entry["replay_buffer_class"] = "HerReplayBuffer"
        entry["replay_buffer_kwargs"] = _python({"n_sampled_goal": params["her_n_sampled_goal"],
                                                 "goal_selection_strategy": params["her_goal_selection_strategy"]})


def _env(cfg: RunConfig, entry: dict[str, Any], notes: list[str]) -> None:
    norm = cfg.runtime.normalize
    if norm.obs or norm.reward:
        settings: dict[str, Any] = {"norm_obs": norm.obs, "norm_reward": norm.reward}
        if norm.clip_obs != 10.0:
            settings["clip_obs"] = norm.clip_obs
        if norm.clip_reward != 10.0:
            settings["clip_reward"] = norm.clip_reward
        if norm.norm_obs_keys is not None:
            settings["norm_obs_keys"] = list(norm.norm_obs_keys)
        if norm.gamma is not None and norm.gamma != getattr(cfg.params, "gamma", 0.99):
            notes.append(f"runtime.normalize.gamma: rl_zoo3 uses the algorithm's gamma for VecNormalize, not {norm.gamma}")
        entry["normalize"] = settings
    if cfg.env.wrappers:
        entry["env_wrapper"] = [{w.name: dict(w.kwargs)} if w.kwargs else w.name for w in cfg.env.wrappers]
    if cfg.env.frame_stack:
        entry["frame_stack"] = cfg.env.frame_stack
    if cfg.env.kwargs:
        entry["env_kwargs"] = dict(cfg.env.kwargs)
    if cfg.env.entry_point:
        notes.append(f"env.entry_point: rl_zoo3 takes registered env ids only; register {cfg.env.entry_point} "
                     "with gymnasium.register and use its id (--env)")


def _policy_kwargs(cfg: RunConfig) -> dict[str, Any]:
    assert cfg.spec is not None
    policy = cfg.policy
    out: dict[str, Any] = {}
    if policy.net_arch is not None:
        out["net_arch"] = policy.net_arch
    if policy.activation != "auto":
        out["activation_fn"] = _Code(ACTIVATION_NAMES[str(policy.activation)])
    for name in ("log_std_init", "ortho_init", "use_expln", "full_std", "squash_output", "share_features_extractor",
                 "n_critics"):
        value = getattr(policy, name)
        default = type(policy).model_fields[name].default
        if value != default and name in cfg.spec.policy_keys:
            out[name] = value
    if policy.optimizer != "auto":
        out["optimizer_class"] = _Code(OPTIMIZER_NAMES[str(policy.optimizer)])
    optimizer_kwargs: dict[str, Any] = {}
    if policy.optimizer_eps is not None:
        optimizer_kwargs["eps"] = policy.optimizer_eps
    if policy.weight_decay:
        optimizer_kwargs["weight_decay"] = policy.weight_decay
    if optimizer_kwargs:
        out["optimizer_kwargs"] = optimizer_kwargs
    defaults = cfg.spec.params()
    for name in cfg.spec.policy_params:  # settings its table holds that SB3 takes as policy_kwargs
        value = getattr(cfg.params, name)
        if value is not None and value != getattr(defaults, name):
            out[name] = value
    return out


def export_yaml(cfg: RunConfig, env: str | None = None) -> tuple[str, list[str]]:
    """A zoo file holding one entry, for ``env`` (default: the config's env id); and the notes."""
    entry, notes = export_entry(cfg)
    key = env or cfg.env.id
    if not key:
        raise ValueError("the config has no env id (an entry point): name the zoo entry with --env ID")
    header = "".join(f"# note: {n}\n" for n in notes)
    algo = zoo_algo_name(cfg.algo)
    header = f"# rl_zoo3 hyperparameters ({algo}), written by rlpanel zoo export\n" + header
    return header + yaml.safe_dump({key: entry}, sort_keys=False, width=120), notes


def known_algorithms() -> list[str]:
    return [a for a in ALGORITHMS if a in ZOO_ALGOS.values()]
