"""A run folder read into the neutral form every tracker takes: flat params, tags, metric points, artifacts.

Params are the resolved ``config.yaml`` by dotted path (``ppo.n_steps``), each value as text; tags say what the
run is (algo, env, engine, preset, group, seed, state); metric points come from ``metrics.jsonl``'s records, each
at its step (the records keep their order, so a ledger counts what was sent), and from ``telemetry.jsonl``'s GPU
and host samples, one tick every ``TELEMETRY_EVERY_S`` at the step the run had reached then; artifacts are the
files worth keeping beside them, by the name they take in the tracker.
"""

from __future__ import annotations

import bisect
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config.dotted import leaves
from core.run.checkpoints import best_checkpoint, find_checkpoint
from core.run.layout import RunDir
from core.run.records import CYCLE, EPISODE, EPISODES, EVAL, PROGRESS, STEP_KINDS, TRAIN, well_formed
from core.run.store import run_info
from core.util.jsonl import read_jsonl
from core.util.yaml_reader import read_yaml_mapping

TELEMETRY_EVERY_S = 10.0  # one telemetry tick sent per this many seconds: 5 Hz over a night would be ~10^6 points a key
# telemetry fields sent, by the name they take (a GPU's under gpu<N>/, the run's host figures under host/)
GPU_FIELDS = {"utilization_pct": "utilization_pct", "memory_used_bytes": "memory_used_bytes",
              "process_memory_bytes": "process_memory_bytes", "temperature_c": "temperature_c", "power_w": "power_w",
              "sm_clock_mhz": "sm_clock_mhz"}
HOST_FIELDS = {"host_memory_bytes": "memory_bytes", "rss_bytes": "rss_bytes", "cpu_pct": "cpu_pct",
               "process_cpu_pct": "process_cpu_pct"}
# the metric names of each record kind's fields
EPISODE_KEYS = {"reward": "reward", "length": "episode_length"}
CYCLE_KEYS = {"collect_s": "time/collect_s", "train_s": "time/train_s", "other_s": "time/other_s",
              "gpu_collect_pct": "time/gpu_collect_pct", "gpu_train_pct": "time/gpu_train_pct"}
METRIC_KINDS = (EPISODE, EPISODES, PROGRESS, TRAIN, EVAL, CYCLE)


class SyncError(Exception):
    """A sync that cannot go on: one line naming the run or the destination and the fix."""


@dataclass(frozen=True)
class MetricPoint:
    """One value of one metric at a step of the run (``t``: when it was recorded, unix time)."""

    key: str
    value: float
    step: int
    t: float


@dataclass(frozen=True)
class RunSnapshot:
    """What a tracker is given of one run, as its folder holds it now."""

    run_dir: Path
    label: str
    state: str
    params: dict[str, str]
    tags: dict[str, str]
    records: list[dict[str, Any]]  # metrics.jsonl's well-formed records, in the file's order
    artifacts: dict[str, Path] = field(default_factory=dict)  # the name in the tracker -> the file

    @property
    def run_id(self) -> str:
        return self.run_dir.name


def read_run(run_dir: Path) -> RunSnapshot:
    """The run in ``run_dir`` as a ``RunSnapshot``; ``SyncError`` when its config cannot be read."""
    layout = RunDir(run_dir)
    try:
        config = read_yaml_mapping(layout.config)
    except ValueError as exc:
        raise SyncError(f"run {layout.name} cannot be synced: {exc}; restore its config.yaml") from None
    info = run_info(layout.path)
    runtime: dict[str, Any] = config["runtime"] if isinstance(config.get("runtime"), dict) else {}
    group = info.status.group or {}
    tags = {"rlpanel.run_id": info.id, "algo": info.algo, "env": info.env, "engine": info.engine,
            "preset": info.preset or "", "group": str(group.get("name") or group.get("id") or ""),
            "seed": "" if runtime.get("seed") is None else str(runtime.get("seed")), "state": info.state,
            "user_tags": ",".join(info.tags)}
    return RunSnapshot(layout.path, info.label, info.state, flat_params(config), {k: v for k, v in tags.items() if v},
                       [r for r in read_jsonl(layout.metrics) if well_formed(r)], artifacts(layout.path))


def flat_params(config: dict[str, Any]) -> dict[str, str]:
    """The config by dotted path, every value as text (numbers and lists as JSON: ``128``, ``[64, 64]``)."""
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in leaves(config).items()}


def artifacts(run_dir: Path) -> dict[str, Path]:
    """config.yaml, summary.json, evaluations.jsonl and the last and best checkpoints' model and VecNormalize
    statistics (never the replay buffer: gigabytes), those that exist, by their path in the run folder."""
    layout = RunDir(run_dir)
    files = [layout.config, layout.summary, layout.evaluations_file]
    for checkpoint in (find_checkpoint(run_dir).checkpoint, best_checkpoint(run_dir)):
        if checkpoint is not None:
            files += [p for part in ("model", "vecnormalize") if (p := checkpoint.path(run_dir, part)) is not None]
    return {path.relative_to(layout.path).as_posix(): path for path in files if path.is_file()}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def record_points(rec: dict[str, Any]) -> list[MetricPoint]:
    """The metric points of one ``metrics.jsonl`` record (none for events and attempts)."""
    kind, step, t = rec.get("kind"), rec.get("step"), rec.get("t")
    if kind not in METRIC_KINDS or not isinstance(step, int) or not isinstance(t, int | float):
        return []
    values: dict[str, Any]
    if kind in (EPISODE, EPISODES):
        values = {name: rec.get(key) for key, name in EPISODE_KEYS.items()}
        values.update({f"env/{key}": value for key, value in (rec.get("m") or {}).items()})
    elif kind == PROGRESS:
        values = {"steps_per_s": rec.get("fps")}
    elif kind == EVAL:
        values = {"eval/mean_reward": rec.get("mean_reward"), "eval/std_reward": rec.get("std_reward")}
    elif kind == CYCLE:
        values = {name: rec.get(key) for key, name in CYCLE_KEYS.items()}
    else:  # train: SB3's logger keys as SB3 names them (train/loss, rollout/ep_rew_mean, ...)
        values = {key: value for key, value in rec.items() if key not in ("kind", "step", "t")}
    return [MetricPoint(key, number, step, float(t)) for key, value in values.items()
            if (number := _number(value)) is not None]


class StepClock:
    """The step a run had reached at a time, from its records: what a telemetry sample is plotted at."""

    def __init__(self, records: list[dict[str, Any]]):
        pairs = sorted((float(r["t"]), int(r["step"])) for r in records if r.get("kind") in STEP_KINDS)
        self._times = [t for t, _ in pairs]
        self._steps = [s for _, s in pairs]

    def step_at(self, t: float) -> int:
        i = bisect.bisect_right(self._times, t)
        return self._steps[i - 1] if i else 0


def telemetry_points(run_dir: Path, after_t: float, clock: StepClock) -> tuple[list[MetricPoint], float]:
    """The GPU and host figures of ``telemetry.jsonl`` recorded after ``after_t``, one tick per
    ``TELEMETRY_EVERY_S``, and the time of the last tick taken (the next call's ``after_t``)."""
    points: list[MetricPoint] = []
    kept_t, next_t = after_t, after_t + TELEMETRY_EVERY_S if after_t else 0.0
    for line in read_jsonl(RunDir(run_dir).telemetry):
        t = line.get("t")
        if line.get("kind") not in (None, "agg") or not isinstance(t, int | float) or t <= after_t:
            continue
        if t != kept_t and t < next_t:
            continue
        kept_t, next_t = t, t + TELEMETRY_EVERY_S
        step = clock.step_at(t)
        gpu = line.get("gpu")
        names = [(f"gpu{gpu}/{name}", key) for key, name in GPU_FIELDS.items()] if isinstance(gpu, int) else []
        names += [(f"host/{name}", key) for key, name in HOST_FIELDS.items()]
        points += [MetricPoint(name, number, step, float(t)) for name, key in names
                   if (number := _number(line.get(key))) is not None]
    return _first_per_key_and_time(points), kept_t


def _first_per_key_and_time(points: list[MetricPoint]) -> list[MetricPoint]:
    """One point per metric and tick: every GPU's line of a tick repeats the host's figures."""
    seen: set[tuple[str, float]] = set()
    out = []
    for p in points:
        if (p.key, p.t) not in seen:
            seen.add((p.key, p.t))
            out.append(p)
    return out
