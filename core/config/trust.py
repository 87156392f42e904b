"""Code a config names (an env ``entry_point``, an own network) and the user's trust in it.

A preset or a config file someone sent may name code: ``env.entry_point: "pkg.mod:Class"``
imports ``pkg.mod`` and calls ``Class``; so do ``policy.features_extractor`` and ``policy.class``
(the user's own network, issue 30), under the same rule. The worker runs it once the user chose to train; nothing
else may run it before the user says so. Reading such an env's spaces (for the estimate, the
window's fit bar or the pre-launch checks) needs its module trusted: once per module, by
``--trust MODULE`` on ``train``/``estimate`` or by the window's question before the first launch,
remembered in the user folder (``trusted-modules.json``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.config.errors import ConfigError, FieldIssue
from core.util.files import read_json, write_json_atomic
from core.util.paths import user_home

if TYPE_CHECKING:  # the schema (pydantic) loads where a config is made, not with the window's first frame
    from core.config.schema import EnvSpec, PolicyParams, RunConfig

TRUST_FILE = "trusted-modules.json"


def code_module(env: EnvSpec) -> str | None:
    """The module ``env`` imports (``pkg.mod`` of ``pkg.mod:Class``), or None for a gymnasium id."""
    return env.entry_point.split(":", 1)[0] if env.entry_point else None


def policy_modules(policy: PolicyParams) -> list[str]:
    """The modules of the user's own network (``policy.features_extractor``, ``policy.class``), each once."""
    return list(dict.fromkeys(ref.split(":", 1)[0] for ref in policy.code))


def config_modules(cfg: RunConfig) -> list[str]:
    """Every module ``cfg`` imports as code: the env's entry point, then the own network's; each once."""
    env = code_module(cfg.env)
    return list(dict.fromkeys(([env] if env else []) + policy_modules(cfg.policy)))


def code_modules(data: dict[str, Any]) -> list[str]:
    """The modules a raw (partial) config or preset names as code, without validating it."""
    env = data.get("env") if isinstance(data, dict) else None
    policy = data.get("policy") if isinstance(data, dict) else None
    refs = [env.get("entry_point") if isinstance(env, dict) else None]
    if isinstance(policy, dict):
        refs += [policy.get("features_extractor"), policy.get("class"), policy.get("policy_class")]
    return list(dict.fromkeys(ref.split(":", 1)[0] for ref in refs if isinstance(ref, str) and ":" in ref))


def trusted_modules() -> set[str]:
    data = read_json(user_home() / TRUST_FILE, default=None)
    found = data.get("modules") if isinstance(data, dict) else None
    return {m for m in found if isinstance(m, str)} if isinstance(found, list) else set()


def is_trusted(module: str) -> bool:
    return module in trusted_modules()


def trust(module: str) -> None:
    """Remember that the user lets rlpanel import ``module`` (to read its spaces, to train)."""
    modules = trusted_modules() | {module}
    write_json_atomic(user_home() / TRUST_FILE, {"modules": sorted(modules)})


def require_trusted(env: EnvSpec) -> None:
    """Raise ``ConfigError`` on ``env.entry_point`` when it names code the user has not trusted."""
    module = code_module(env)
    if module and not is_trusted(module):
        raise ConfigError([FieldIssue("env.entry_point", (
            f"this config runs code from {module} ({env.entry_point}); rlpanel imports it only once you trust it: "
            f"add --trust {module} (remembered), or launch it from the window, which asks first"))])


def require_trusted_policy(policy: PolicyParams) -> None:
    """Raise ``ConfigError`` on the own network's field whose module the user has not trusted (before any import)."""
    for field, ref in (("features_extractor", policy.features_extractor), ("class", policy.policy_class)):
        module = ref.split(":", 1)[0] if ref else None
        if module and not is_trusted(module):
            raise ConfigError([FieldIssue(f"policy.{field}", (
                f"this config runs code from {module} (your own network {ref}); rlpanel imports it only once you trust "
                f"it: add --trust {module} (remembered), or launch it from the window, which asks first"))])
