"""Raw config data: deep merge and dotted paths (``ppo.n_epochs``), shared by presets, ``--set``,
plans and the GUI's overrides. Plain dicts in, new dicts out (inputs are never modified)."""

from __future__ import annotations

from typing import Any


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``over`` into a copy of ``base``: dicts merge, everything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "kwargs":
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def set_path(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``data`` with ``value`` placed at the dotted ``path``."""
    head, _, rest = path.partition(".")
    out = dict(data)
    if rest:
        inner = out.get(head)
        out[head] = set_path(inner if isinstance(inner, dict) else {}, rest, value)
    else:
        out[head] = value
    return out


def del_path(data: dict[str, Any], path: str) -> dict[str, Any]:
    """A copy of ``data`` without the dotted ``path`` (and without sections it leaves empty)."""
    head, _, rest = path.partition(".")
    if head not in data:
        return dict(data)
    out = dict(data)
    if rest and isinstance(out[head], dict):
        inner = del_path(out[head], rest)
        if inner:
            out[head] = inner
        else:
            del out[head]
    elif not rest:
        del out[head]
    return out


def get_path(data: dict[str, Any], path: str, default: Any = None) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict) or part not in data:
            return default
        data = data[part]
    return data


def leaves(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"ppo": {"n_epochs": 10}}`` -> ``{"ppo.n_epochs": 10}``: every non-mapping value by its dotted path."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
