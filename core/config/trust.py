"""Code a config names (an env ``entry_point``) and the user's trust in it.

A preset or a config file someone sent may name code: ``env.entry_point: "pkg.mod:Class"``
imports ``pkg.mod`` and calls ``Class``. The worker runs it once the user chose to train; nothing
else may run it before the user says so. Reading such an env's spaces (for the estimate, the
window's fit bar or the pre-launch checks) needs its module trusted: once per module, by
``--trust MODULE`` on ``train``/``estimate`` or by the window's question before the first launch,
remembered in the user folder (``trusted-modules.json``).
"""

from __future__ import annotations

from typing import Any

from core.config.errors import ConfigError, FieldIssue
from core.config.schema import EnvSpec
from core.util.files import read_json, write_json_atomic
from core.util.paths import user_home

TRUST_FILE = "trusted-modules.json"


def code_module(env: EnvSpec) -> str | None:
    """The module ``env`` imports (``pkg.mod`` of ``pkg.mod:Class``), or None for a gymnasium id."""
    return env.entry_point.split(":", 1)[0] if env.entry_point else None


def code_modules(data: dict[str, Any]) -> list[str]:
    """The modules a raw (partial) config or preset names as code, without validating it."""
    env = data.get("env") if isinstance(data, dict) else None
    entry = env.get("entry_point") if isinstance(env, dict) else None
    return [entry.split(":", 1)[0]] if isinstance(entry, str) and ":" in entry else []


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
