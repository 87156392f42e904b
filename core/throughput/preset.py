"""The tune's answer as a user preset ``tuned-<algo>-<env>``: the config with the pick, the table as its description."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from core.config.algorithms.registry import ALGORITHMS
from core.config.dotted import set_path
from core.config.errors import ConfigError, FieldIssue
from core.config.presets import save_user_preset
from core.config.schema import RunConfig
from core.throughput.knobs import short
from core.throughput.table import TuneResult, format_table
from core.util.paths import user_presets_dir
from core.util.text import safe_name
from core.util.yaml_reader import read_yaml_mapping

SECTIONS = {spec.section for spec in ALGORITHMS.values()}
MARK = "Tuned by rlpanel tune"  # a preset whose description starts so is the tune's own: a new tune replaces it


def tuned_preset_name(cfg: RunConfig) -> str:
    return safe_name(f"tuned-{cfg.algo.lower()}-{cfg.env.label}")


def tuned_preset_data(cfg: RunConfig, result: TuneResult) -> dict[str, Any]:
    """The user's settings that differ from the defaults, the env and algorithm, and the pick over them."""
    data: dict[str, Any] = cfg.model_dump(mode="json", exclude_defaults=True, exclude={"name"})
    section = cfg.spec.section if cfg.spec else None
    data = {"algo": cfg.algo, "env": cfg.env.model_dump(mode="json", exclude_defaults=True),
            **{k: v for k, v in data.items() if k not in ("algo", "env", "schema_version")
               and (k not in SECTIONS or k == section)}}
    picked = result.picked
    for path, value in (picked.settings if picked else {}).items():
        data = set_path(data, path, value)
    return data


def description(cfg: RunConfig, result: TuneResult) -> str:
    picked = result.picked
    speedup = result.speedup()
    ratio = f", {speedup:.2f}x the config it started from" if speedup else ""
    head = f"{MARK} on {time.strftime('%Y-%m-%d %H:%M')} for {cfg.algo} on {cfg.env.label}: " + (
        f"{short(picked.settings)} at {picked.steps_per_s or 0:,.0f} steps/s{ratio}." if picked else "nothing measured.")
    machine = f"\n{result.machine[:1].upper()}{result.machine[1:]}." if result.machine else ""
    return head + machine + "\n\n" + format_table(result) + "\n"


def save_tuned_preset(cfg: RunConfig, result: TuneResult) -> str:
    """Write the preset (replacing an earlier tune's, never a preset of the user's); its name."""
    name = tuned_preset_name(cfg)
    path = user_presets_dir() / f"{name}.yaml"
    if path.exists() and not _is_tuned(path):
        raise ConfigError([FieldIssue("preset", f"user preset {name!r} ({path}) exists and was not written by a tune: "
                                                "rename or delete it, then tune again")])
    save_user_preset(name, tuned_preset_data(cfg, result), description(cfg, result), overwrite=path.exists())
    result.preset = name
    return name


def _is_tuned(path: Path) -> bool:
    try:
        return str(read_yaml_mapping(path).get("description", "")).startswith(MARK)
    except (ValueError, OSError):
        return False
