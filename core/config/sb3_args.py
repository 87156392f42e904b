"""What SB3 gets from a config, as plain data: the algorithm's keyword arguments and its ``policy_kwargs``.

One builder for both readers: ``core.worker.factory`` turns the names into torch classes and builds
the model; ``core.zoo.export`` writes the same data as the text rl_zoo3 evaluates. Which field goes
where is the field's own metadata (``hp(..., sb3=...)``, ``core.config.fields.FieldMeta``): nothing
here lists field names of an algorithm.
"""

from __future__ import annotations

from typing import Any

from core.config.algorithms.off_policy import OffPolicyParams
from core.config.algorithms.spec import AlgoSpec
from core.config.fields import fields_where
from core.config.schema import (
    POLICY_OPTIONS,
    PolicyParams,
    RunConfig,
    policy_switched,
    resolved,
    resolved_activation,
    resolved_net_arch,
)


def require_spec(cfg: RunConfig) -> AlgoSpec:
    """The algorithm's table; a baseline has no model to build."""
    if cfg.spec is None:
        raise ValueError(f"{cfg.algo} is a baseline: it has no model to build")
    return cfg.spec


def algo_kwargs(cfg: RunConfig, changed_only: bool = False) -> dict[str, Any]:
    """The fields of the chosen section SB3's constructor takes (``sb3="model"``), as JSON data ('auto' resolved):
    a schedule is ``{schedule: linear, start, end}``; an off-policy ``train_freq`` in episodes is ``[n, "episode"]``.

    ``changed_only``: only those that differ from the section's defaults (what a zoo entry writes).
    """
    spec = require_spec(cfg)
    params = resolved(cfg).params
    data = params.model_dump(mode="json")
    defaults = spec.params().model_dump(mode="json") if changed_only else {}
    out = {name: data[name] for name in fields_where(spec.params, sb3="model")
           if not changed_only or data[name] != defaults.get(name)}
    if isinstance(params, OffPolicyParams) and params.train_freq_unit == "episode":
        out["train_freq"] = [params.train_freq, "episode"]
    return out


def policy_kwargs(cfg: RunConfig, changed_only: bool = False) -> dict[str, Any]:
    """SB3's ``policy_kwargs`` as data: ``activation_fn`` and ``optimizer_class`` are the schema's names
    (``relu``, ``adamw``), ``features_extractor_class`` the own network's 'module:Class', for the reader to turn
    into classes or text.

    Built for the model (``changed_only`` False): the resolved network and activation, every setting the
    policy takes that is set. For a zoo entry (``changed_only`` True): only what differs from the defaults.
    """
    spec = require_spec(cfg)
    policy, params = cfg.policy, cfg.params
    out: dict[str, Any] = {}
    if changed_only:
        if policy.net_arch is not None:
            out["net_arch"] = policy.net_arch
        if policy.activation != "auto":
            out["activation_fn"] = str(policy.activation)
    else:
        arch = resolved_net_arch(cfg, cnn=policy.kind == "CnnPolicy")
        out["net_arch"] = arch if spec.net_keys else arch["qf"]  # DQN, QR-DQN, ARS: one plain list
        out["activation_fn"] = resolved_activation(cfg)
    defaults = spec.params()
    for name in spec.policy_params:  # settings of the algorithm's table its policy takes (LSTM sizes, quantiles)
        value = getattr(params, name)
        if value is not None and not (changed_only and value == getattr(defaults, name)):
            out[name] = value
    if policy_switched(cfg):
        return {k: v for k, v in out.items() if k in spec.policy_params}  # ARS's LinearPolicy takes no network settings
    policy_defaults = PolicyParams()
    for name in POLICY_OPTIONS:
        value = getattr(policy, name)
        if name in spec.policy_keys and value is not None and not (changed_only and value == getattr(policy_defaults, name)):
            out[name] = value
    if policy.optimizer != "auto":
        out["optimizer_class"] = str(policy.optimizer)
    optimizer_kwargs: dict[str, Any] = {}
    if policy.optimizer_eps is not None:
        optimizer_kwargs["eps"] = policy.optimizer_eps
    if policy.weight_decay:
        optimizer_kwargs["weight_decay"] = policy.weight_decay
    if optimizer_kwargs:
        out["optimizer_kwargs"] = optimizer_kwargs
    if policy.features_extractor:  # the user's own network: 'module:Class' for the reader to import or write
        out["features_extractor_class"] = policy.features_extractor
        if policy.features_extractor_kwargs:
            out["features_extractor_kwargs"] = dict(policy.features_extractor_kwargs)
    return out
