"""Which runs form a group of seeds: the runs launched together (``status.json``'s ``group``), or the runs of
one config (the same settings but the seed).

A group is what the statistics across seeds (mean, IQM, confidence intervals), the curves with bands and
the tables of one row per group are computed over. ``by="group"``: runs launched as a group share its id
(``rlpanel train --seeds 5``, the Seeds field, a queue job with seeds); a run launched alone is a group of
one. ``by="config"``: runs whose configs differ only in what does not change what is learned (the seed,
the device, the processes that step the envs, checkpointing, telemetry) form a group, whoever launched them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.results.settings_diff import run_settings
from core.run.names import read_run_label
from core.run.status import read_recorded_status
from core.util.yaml_reader import read_yaml_mapping

GroupBy = Literal["group", "config"]
# settings that never change what a run learns (so runs differing only in them are seeds of one config)
NOT_LEARNED = ("runtime.seed", "runtime.device", "runtime.vec_env", "runtime.start_method", "runtime.torch_threads",
               "runtime.telemetry_hz", "runtime.keep_awake", "runtime.cudnn_benchmark", "runtime.thermal_",
               "budget.checkpoint_every", "budget.keep_checkpoints", "budget.checkpoint_minutes", "env.path", "runtime.sync")


@dataclass(frozen=True)
class RunGroup:
    """Runs that are seeds of one experiment: ``key`` tells groups apart, ``label`` is what a view shows."""

    key: str
    label: str
    runs: tuple[Path, ...]

    @property
    def n(self) -> int:
        return len(self.runs)


def group_runs(run_dirs: list[Path], by: GroupBy = "group") -> list[RunGroup]:
    """The groups of ``run_dirs``, in the order of each group's first run; every run is in exactly one group."""
    keyed: dict[str, list[Path]] = {}
    labels: dict[str, str] = {}
    for run_dir in run_dirs:
        key, label = group_key(Path(run_dir), by)
        keyed.setdefault(key, []).append(Path(run_dir))
        labels.setdefault(key, label)
    return [RunGroup(key, labels[key], tuple(runs)) for key, runs in keyed.items()]


def group_key(run_dir: Path, by: GroupBy) -> tuple[str, str]:
    """(key, label) of the group ``run_dir`` belongs to."""
    if by == "group":
        group = read_recorded_status(run_dir).group or {}
        if group.get("id"):
            return f"group:{group['id']}", str(group.get("name") or group["id"])
        return f"run:{run_dir.name}", read_run_label(run_dir)
    settings = learned_settings(run_dir)
    digest = hashlib.sha1(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"config:{digest}", config_label(run_dir)


def learned_settings(run_dir: Path) -> dict[str, Any]:
    """What a run learns from: its algorithm, env and every setting but those in ``NOT_LEARNED``."""
    try:
        raw = read_yaml_mapping(Path(run_dir) / "config.yaml")
    except (OSError, ValueError):
        raw = {}
    env = _env(raw)
    kept = {path: value for path, value in run_settings(run_dir).items() if not path.startswith(NOT_LEARNED)}
    if kept.get("runtime.engine") == "sb3":  # the engine each run had before runtime.engine was a setting
        del kept["runtime.engine"]
    return {"algo": raw.get("algo"), "env": env.get("id") or env.get("entry_point"), **kept}


def config_label(run_dir: Path) -> str:
    """``PPO CartPole-v1`` (the config's name when it has one)."""
    try:
        raw = read_yaml_mapping(Path(run_dir) / "config.yaml")
    except (OSError, ValueError):
        return Path(run_dir).name
    env = _env(raw)
    name = raw.get("name")
    label = f"{raw.get('algo', '?')} {env.get('id') or str(env.get('entry_point') or '?').rsplit(':', 1)[-1]}"
    return f"{name} ({label})" if name else label


def _env(raw: dict[str, Any]) -> dict[str, Any]:
    env = raw.get("env")
    return env if isinstance(env, dict) else {}
