"""The policy network of a run (``PolicyParams``): SB3's network settings, or the user's own network as code.

A section of ``core.config.schema.RunConfig`` (``policy:``), kept apart from the schema's other sections.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, field_validator

from core.config.fields import Section, hp

ACTIVATIONS = ("auto", "tanh", "relu", "elu", "leaky_relu", "gelu", "silu")
POLICY_KINDS = ("auto", "MlpPolicy", "CnnPolicy", "MultiInputPolicy")
OPTIMIZERS = ("auto", "adam", "adamw", "rmsprop", "rmsprop_tf_like", "sgd")
CODE_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")  # 'package.module:Class': code a config names


def _code_ref(field: str, value: str | None, example: str) -> str | None:
    """``value`` when it is 'package.module:Class' (empty: None), else the error naming ``field`` and the fix."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if not CODE_REF.fullmatch(value):
        raise ValueError(f"policy.{field} is not 'module:Class': write the module, a colon and the class, e.g. {example}")
    return value


class PolicyParams(Section):
    """The policy network shared by the algorithm's actor and critic(s), or the user's own network
    (``features_extractor``, ``class``: code, imported only once the user trusts its module)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False, validate_by_name=True,
                              validate_by_alias=True, serialize_by_alias=True)

    net_arch: list[int] | dict[str, list[int]] | None = hp(
        None, "Network layers",
        "Hidden layer sizes, e.g. [256, 256], or {pi: [...], vf: [...]} / {pi: [...], qf: [...]}; empty: SB3's default.")
    activation: Literal[ACTIVATIONS] = hp(  # type: ignore[valid-type]
        "auto", "Activation", "Hidden-layer activation; auto is SB3's (tanh on-policy, relu off-policy).")
    kind: Literal[POLICY_KINDS] = hp(  # type: ignore[valid-type]
        "auto", "Policy", "auto picks from the observations: CnnPolicy for images, MultiInputPolicy for dicts, else MlpPolicy.")
    log_std_init: float | None = hp(None, "Initial log std",
                                    "Initial log standard deviation of Gaussian actions (empty: SB3's, 0 on-policy, -3 SAC).",
                                    "", ge=-20, le=20)
    ortho_init: bool = hp(True, "Orthogonal init", "Orthogonal initialisation of the layers (PPO, A2C).")
    use_expln: bool = hp(False, "gSDE expln", "gSDE: keep the variance positive with expln instead of exp.")
    full_std: bool = hp(True, "gSDE full std", "gSDE: one std per latent feature and action (off: per latent feature).")
    squash_output: bool = hp(False, "gSDE squash output", "gSDE: squash actions with tanh (PPO, A2C).")
    share_features_extractor: bool | None = hp(None, "Share features extractor",
                                               "Actor and critic share the CNN or input layer (empty: SB3's, yes on-policy, "
                                               "no off-policy).")
    n_critics: int | None = hp(None, "Critics", "Q-networks of SAC and TD3 (empty: SB3's, 2; DDPG 1).", "", ge=1, le=10)
    optimizer: Literal[OPTIMIZERS] = hp(  # type: ignore[valid-type]
        "auto", "Optimizer", "auto is the algorithm's own (Adam; RMSprop for A2C with use_rms_prop).")
    optimizer_eps: float | None = hp(None, "Optimizer epsilon", "Numerical stabiliser of the optimizer (empty: its default).",
                                     "", gt=0, le=1)
    weight_decay: float = hp(0.0, "Weight decay", "L2 penalty of the optimizer.", "", ge=0, le=1)
    # the user's own network (issue 30): code, imported by the worker and the estimate's probe once its module is trusted
    features_extractor: str | None = hp(
        None, "Own network", "Your own features extractor in front of the policy and value heads, as 'module:Class' (an "
        "SB3 BaseFeaturesExtractor subclass; its module is imported only once you trust it). Empty: SB3's.")
    features_extractor_kwargs: dict[str, Any] = hp(
        {}, "Own network kwargs", "Keyword arguments of your features extractor (a mapping, e.g. {heads: 4, hidden: 64}); "
        "SB3 adds observation_space.")
    policy_class: str | None = hp(
        None, "Own policy class", "A whole policy of your own as 'module:Class' (a subclass of SB3's policy for the "
        "algorithm, e.g. ActorCriticPolicy for PPO); its module is imported only once you trust it. Empty: SB3's.",
        alias="class")

    @field_validator("features_extractor")
    @classmethod
    def _features_extractor(cls, v: str | None) -> str | None:
        return _code_ref("features_extractor", v, "my_nets:GraphAttention")

    @field_validator("policy_class")
    @classmethod
    def _policy_class(cls, v: str | None) -> str | None:
        return _code_ref("class", v, "my_policies:GraphPolicy")

    @field_validator("features_extractor_kwargs", mode="before")
    @classmethod
    def _extractor_kwargs(cls, v: Any) -> Any:
        if v is None:
            return {}
        if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
            raise ValueError("policy.features_extractor_kwargs must be a mapping of keyword arguments by name, e.g. "
                             "{heads: 4, hidden: 64}")
        return v

    @property
    def code(self) -> tuple[str, ...]:
        """The 'module:Class' references of the user's own network (extractor, policy class), in that order."""
        return tuple(ref for ref in (self.features_extractor, self.policy_class) if ref)

    @field_validator("net_arch")
    @classmethod
    def _net_arch(cls, v: Any) -> Any:
        layers = v.values() if isinstance(v, dict) else [v] if v is not None else []
        if isinstance(v, dict) and (not v or set(v) - {"pi", "vf", "qf"}):
            raise ValueError(f"net_arch keys {sorted(v)} are not valid: use pi with vf (PPO, A2C) or pi with qf (SAC, TD3, DDPG)")
        for sizes in layers:
            if any(not 1 <= s <= 65536 for s in sizes):
                raise ValueError(f"net_arch layer sizes {sizes} must each be 1 to 65536")
        return v
