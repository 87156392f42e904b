"""The single entry for user data: presets, config.yaml, ``--set``, plans and form values.

``validate_config(raw)`` strips keys SB3 cannot honour (with a warning saying why), validates
every field and the rules between them, and raises ``ConfigError`` whose issues name the field
path, the value and the fix.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError

from core.config.dotted import merge
from core.config.errors import ConfigError, CrossFieldError, FieldHint, FieldIssue
from core.config.fields import Section
from core.config.schema import RunConfig, config_hints, resolved, unused_policy_settings
from core.util.yaml_reader import YamlLimitError, load_yaml

# Keys the users' guides put in their configs that SB3 cannot honour. They are accepted on
# import and reported, never silently dropped (docs/safety.md).
IGNORED_KEYS = {
    "use_amp": "SB3 has no mixed-precision training; every update runs in float32 (TF32 where enabled)",
    "cuda_graph_optimization": "SB3 does not capture CUDA graphs; its update loop calls kernels one by one",
    "log_interval": "rlpanel logs every update to metrics.jsonl and TensorBoard; there is nothing to tune",
}


def parse_set(text: str) -> tuple[str, Any]:
    """``"ppo.n_epochs=20"`` -> ``("ppo.n_epochs", 20)``; values are YAML scalars or lists."""
    path, sep, value = text.partition("=")
    path = path.strip()
    if not sep or not re.fullmatch(r"[a-z_][a-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", path):
        raise ConfigError([FieldIssue(_clip(path, 80).strip("'") if path else "--set",
                                      f"--set {_clip(text)} is not PATH=VALUE, e.g. --set ppo.n_epochs=20")])
    try:
        parsed = load_yaml(value, f"--set {path}") if value.strip() else None
    except YamlLimitError as exc:
        raise ConfigError([FieldIssue(path, f"{exc.problem}; {exc.fix}")]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([FieldIssue(path, f"value {_clip(value)} is not valid YAML ({exc.__class__.__name__})")]) from None
    return path, parsed


def _clip_value(value: Any, n: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= n else text[:n] + f"... ({len(text):,} characters)"


def _clip(text: str, n: int = 60) -> str:
    """``text`` quoted, cut to ``n`` characters: a message quotes a value, never a whole file."""
    return repr(text) if len(text) <= n else repr(text[:n]) + f"... ({len(text):,} characters)"


def choose_env(raw: dict[str, Any], env: str) -> dict[str, Any]:
    """``raw`` with the env ``--env`` names (a gymnasium id or ``module:Class``), keeping the
    ``env.kwargs`` it already holds (from ``--set``, ``--config`` or a plan's ``set``)."""
    choice = {"entry_point": env, "id": None} if ":" in env else {"id": env, "entry_point": None}
    return merge(raw, {"env": choice})


def strip_ignored(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Remove keys SB3 cannot honour (top level or one section deep), with a warning each."""
    warnings: list[str] = []

    def strip(d: dict[str, Any], prefix: str) -> dict[str, Any]:
        out = {}
        for key, value in d.items():
            if key in IGNORED_KEYS:
                warnings.append(f"{prefix}{key}: {value!r} is not applied: {IGNORED_KEYS[key]}")
            elif isinstance(value, dict) and not prefix and key != "env":
                out[key] = strip(value, f"{key}.")
            else:
                out[key] = value
        return out

    return strip(raw, ""), warnings


def issues_from_validation(exc: ValidationError) -> list[FieldIssue]:
    """Turn pydantic's errors into issues that name the field path, the value and the fix."""
    issues: list[FieldIssue] = []
    for err in exc.errors():
        original = (err.get("ctx") or {}).get("error")
        if isinstance(original, CrossFieldError):
            issues.extend(original.issues)
            continue
        loc = [str(p) for p in err["loc"] if not _is_branch_tag(p)]
        while loc and loc[-1].isdigit():  # an item of a list: report the list
            loc.pop()
        path = ".".join(loc)
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"].startswith("int_") and _allows_auto(path):
            msg += " or 'auto'"
        if err["type"] == "extra_forbidden":
            parent, _, key = path.rpartition(".")
            msg = f"unknown setting {key!r}"
            known = _known_keys(parent)
            close = difflib.get_close_matches(key, known, n=1)
            msg += f"; did you mean {close[0]!r}?" if close else (f"; known: {', '.join(known)}" if known else "")
        elif "input" in err and err["type"] not in ("missing",) and not isinstance(err["input"], dict):
            msg = f"{_clip_value(err['input'])}: {msg}"
        issues.append(FieldIssue(path, msg))
    # a union (int | 'auto') reports one error per branch: keep one per path
    seen: dict[str, FieldIssue] = {}
    for issue in issues:
        seen.setdefault(issue.path, issue)
    return list(seen.values())


def _is_branch_tag(part: Any) -> bool:
    """pydantic names union branches in ``loc`` (``int``, ``literal['auto']``): not fields."""
    return isinstance(part, str) and ("[" in part or part in ("int", "float", "str", "bool", "none"))


def _allows_auto(path: str) -> bool:
    return path == "ppo.batch_size"


def _known_keys(parent: str) -> list[str]:
    model: Any = RunConfig
    for part in filter(None, parent.split(".")):
        info = model.model_fields.get(part)
        ann = getattr(info, "annotation", None)
        if not (isinstance(ann, type) and issubclass(ann, Section)):
            return []
        model = ann
    return list(model.model_fields)


@dataclass
class ValidatedConfig:
    """A valid config, the warnings about it (every hint's text among them), and the hints
    whose fix the window offers as a button."""

    config: RunConfig
    warnings: list[str] = field(default_factory=list)
    hints: list[FieldHint] = field(default_factory=list)


def validate_config(raw: dict[str, Any], source: str = "") -> ValidatedConfig:
    """Validate raw config data; raise ``ConfigError`` naming every bad field."""
    if not isinstance(raw, dict):
        raise ConfigError([FieldIssue("", f"expected a mapping of settings, got {type(raw).__name__}")], source)
    clean, warnings = strip_ignored(raw)
    for key in ("description", "base"):
        clean.pop(key, None)
    try:
        config = resolved(RunConfig.model_validate(clean))
    except ValidationError as exc:
        raise ConfigError(issues_from_validation(exc), source) from None
    except RecursionError:
        raise ConfigError([FieldIssue("", "nests too deeply to be a config: flatten it")], source) from None
    hints = config_hints(config)
    warnings += unused_policy_settings(config)
    return ValidatedConfig(config, warnings + advice(config) + [str(h) for h in hints], hints)


LEARNING_RATE_CEILING = 0.1  # Adam trains these networks at 1e-5 .. 1e-2; above this the policy collapses


def advice(cfg: RunConfig) -> list[str]:
    """Values that are valid but almost surely a mistake: warned about at launch, recorded in the run."""
    lr = cfg.params.learning_rate if cfg.spec is not None else None
    if isinstance(lr, float) and lr > LEARNING_RATE_CEILING:
        section = cfg.algo.lower()
        return [f"{section}.learning_rate {lr:g} is far above what these networks train with (1e-5 to 1e-2): expect the "
                "policy to collapse or diverge; try 3e-4"]
    return []


