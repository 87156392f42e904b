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

from core.config import sb3_args
from core.config.algorithms.off_policy import ActionNoiseParams, ReplayParams
from core.config.algorithms.registry import ALGORITHMS
from core.config.errors import ConfigError
from core.config.fields import field_meta
from core.config.schema import RunConfig, policy_switched, return_gamma
from core.config.spaces import probe_spaces
from core.zoo.translate import ACTIVATIONS, OPTIMIZERS, ZOO_ALGOS

ACTIVATION_NAMES = {v: k for k, v in ACTIVATIONS.items()}
OPTIMIZER_NAMES = {v: k for k, v in OPTIMIZERS.items()}


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
    entry: dict[str, Any] = {"n_timesteps": cfg.budget.total_timesteps, "policy": _policy_name(cfg, notes),
                             "n_envs": cfg.runtime.n_envs}
    for key, value in sb3_args.algo_kwargs(cfg, changed_only=True).items():  # the fields SB3's constructor takes
        entry[key] = _schedule(value, key, notes) if field_meta(spec.params, key).schedule else value
    _off_policy(cfg, entry)
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
    if switch is not None and policy_switched(cfg):
        return switch[0]  # ARS: LinearPolicy
    kind = _auto_policy(cfg, notes) if cfg.policy.kind == "auto" else str(cfg.policy.kind)
    if cfg.policy.policy_class:
        notes.append(f"policy.class {cfg.policy.policy_class}: rl_zoo3 takes a policy by SB3's name only; written as "
                     f"{kind} (pass your class to the algorithm yourself)")
    for name, mapped in cfg.spec.policy_names:  # RecurrentPPO: MlpPolicy -> MlpLstmPolicy
        if mapped == kind:
            return name
    return kind


def _off_policy(cfg: RunConfig, entry: dict[str, Any]) -> None:
    p = cfg.params
    if isinstance(p, ActionNoiseParams) and p.action_noise != "none":
        entry["noise_type"] = p.action_noise
        entry["noise_std"] = p.action_noise_std
    if isinstance(p, ReplayParams) and p.replay_buffer == "her":
        entry["replay_buffer_class"] = "HerReplayBuffer"
        entry["replay_buffer_kwargs"] = _python({"n_sampled_goal": p.her_n_sampled_goal,
                                                 "goal_selection_strategy": p.her_goal_selection_strategy})


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
        if norm.gamma is not None and norm.gamma != return_gamma(cfg):
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
    """The settings changed from their defaults (``core.config.sb3_args.policy_kwargs``), names as rl_zoo3's code."""
    out = sb3_args.policy_kwargs(cfg, changed_only=True)
    if "activation_fn" in out:
        out["activation_fn"] = _Code(ACTIVATION_NAMES[out["activation_fn"]])
    if "optimizer_class" in out:
        out["optimizer_class"] = _Code(OPTIMIZER_NAMES[out["optimizer_class"]])
    if "features_extractor_class" in out:  # the own network: rl_zoo3's dotted name (module.Class)
        out["features_extractor_class"] = _Code(str(out["features_extractor_class"]).replace(":", "."))
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
