"""Which settings tell the compared runs apart: one column of the results table per setting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.config.algorithms.baselines import BASELINES
from core.config.algorithms.registry import ALGOS
from core.config.dotted import leaves
from core.run.layout import RunDir
from core.util.yaml_reader import read_yaml_mapping

# what a run's row shows in its own columns, or what never tells runs apart
SHOWN_PATHS = {"schema_version", "name", "description", "algo", "env.id", "env.entry_point"}
# what a baseline (a fixed policy playing episodes) never uses: it has no training budget and no network
TRAINING_ONLY = ("budget.", "policy.")
BASELINE_USES = {"budget.episodes"}

def run_settings(run_dir: Path) -> dict[str, Any]:
    """A run's config as dotted paths, without the sections of the algorithms it does not use, a baseline's
    without what only training uses (its cells are empty, not ``total_timesteps 100000``), and without what
    its row shows in other columns (``{}`` when there is no readable config)."""
    try:
        raw = read_yaml_mapping(RunDir(run_dir).config)
    except (OSError, ValueError):
        return {}
    own = str(raw.get("algo", "")).lower()
    others = {a.lower() for a in ALGOS} - {own}
    baseline = own in BASELINES

    def unused(path: str) -> bool:
        return baseline and path.startswith(TRAINING_ONLY) and path not in BASELINE_USES

    return {p: v for p, v in leaves(raw).items()
            if p not in SHOWN_PATHS and p.split(".", 1)[0] not in others and not unused(p)}


def _trained(runs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any] | None]:
    return [settings if algo not in BASELINES and settings else None for algo, settings in runs]


def differing_paths(runs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The settings (dotted paths) that two or more of the trained runs have and not all alike
    (an A2C setting compares the A2C runs only), sorted. Baselines never count: they differ from
    trained runs by design."""
    values: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for settings in filter(None, _trained(runs)):
        for path, value in settings.items():
            values.setdefault(path, set()).add(json.dumps(value, sort_keys=True))
            counts[path] = counts.get(path, 0) + 1
    return sorted(p for p, seen in values.items() if counts[p] >= 2 and len(seen) > 1)


def differences(runs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """For each ``(algo, settings)``: its values of the ``differing_paths``, as ``path=value, ...``
    (``""`` for a baseline)."""
    differing = differing_paths(runs)
    return [", ".join(f"{p}={setting_text(settings[p])}" for p in differing if p in settings) if settings else ""
            for settings in _trained(runs)]


def setting_text(value: Any) -> str:
    """A value as the config file writes it (``null``, ``true``, ``[64, 64]``), floats in short form."""
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else json.dumps(value)
