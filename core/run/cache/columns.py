"""A run's records turned into columns: what the window's plots take in one ``extend`` each, and what the cache keeps.

The window's run follower (``app.monitor.follower``) reads a run folder in its own thread and hands the
window these batches instead of lists of records: the per-record Python work (thousands of records a
batch while a long run loads) happens there, and the GUI thread only copies arrays into plot buffers.
The worker's cache writer (``core.run.cache.writer``) builds the same batches for the run's cache, so a
run opens from columns the first time too. Record kinds it does not know are skipped.

A batch is cut into parts where the run did not run: an ``attempt`` record in the metrics (every
start of the worker writes one), a ``status`` line in the telemetry (every start of its recorder
writes one). The plots break their lines between parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.run.episodes import group_of
from core.run.records import CYCLE
from core.run.time_split import TimeSplit
from core.telemetry.gpu_measure import NVML_PROCESS, TORCH_RESERVED, WDDM_COUNTER, gpu_measure
from core.telemetry.throttle import slowdown

GIB = 1024**3
# telemetry field -> scale to the plotted unit
GPU_FIELDS = {"memory_used_bytes": 1 / GIB, "temperature_c": 1.0, "utilization_pct": 1.0, "power_w": 1.0}
HOST_FIELDS = {"process_cpu_pct": 1.0, "rss_bytes": 1 / GIB}
RUN_KEY = "run"  # the series key of the run's own CPU and of its RSS sum
THROTTLE_GAP_S = 5.0  # slowed samples closer than this are one span
# the run's own GPU memory: a series per measure, ``<prefix><gpu>`` (core.telemetry.gpu_measure)
RUN_GPU_SERIES = {"proc": NVML_PROCESS, "wddm": WDDM_COUNTER, "torch": TORCH_RESERVED}
_SERIES_OF_MEASURE = {measure: prefix for prefix, measure in RUN_GPU_SERIES.items()}
RECENT_CYCLES = 60  # cycle records a batch hands over as they are (~a minute): the Monitor's "recent" split

Columns = tuple[np.ndarray, np.ndarray, np.ndarray]  # steps, times, values


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _columns(steps: list[Any], times: list[Any], values: list[Any]) -> Columns:
    return np.asarray(steps, dtype=float), np.asarray(times, dtype=float), np.asarray(values, dtype=float)


class _Collect:
    """Lists of (step, t, value) per series, turned into arrays at the end."""

    def __init__(self) -> None:
        self.cols: dict[Any, tuple[list[Any], list[Any], list[Any]]] = {}

    def add(self, key: Any, step: Any, t: Any, value: float) -> None:
        col = self.cols.setdefault(key, ([], [], []))
        col[0].append(step)
        col[1].append(t)
        col[2].append(value)

    def arrays(self) -> dict[Any, Columns]:
        return {k: _columns(*v) for k, v in self.cols.items()}


@dataclass
class MetricsPart:
    """The records between two attempts of the run (``after_break``: an attempt started before them)."""

    after_break: bool = False
    episodes: Columns | None = None
    evals: Columns | None = None
    progress: Columns | None = None  # steps/s
    train: dict[str, Columns] = field(default_factory=dict)  # one per logged scalar
    episode_weights: np.ndarray | None = None  # the episodes each episode point stands for


@dataclass
class MetricsBatch:
    parts: list[MetricsPart]
    events: list[dict[str, Any]]
    last_progress: dict[str, Any] | None
    reset: bool = False  # the file was replaced (a resume or restart rewrote it): start over
    records: int = 0
    time_split: TimeSplit | None = None  # the batch's cycle records summed (the whole run's split adds them up)
    recent_cycles: list[dict[str, Any]] = field(default_factory=list)  # its newest cycle records (RECENT_CYCLES)


def _metrics_part(records: list[dict[str, Any]], after_break: bool) -> MetricsPart:
    cols = _Collect()
    for rec in records:
        kind = rec.get("kind")
        step, t = rec.get("step", 0), rec.get("t", 0)
        if kind in ("episode", "episodes"):
            _episode_points(cols, rec, step, t)
            measures = rec.get("m")
            if isinstance(measures, dict):  # the env's own measures: a chart each, "env/<key>"
                for key, value in measures.items():
                    if isinstance(value, int | float):
                        cols.add(("train", f"env/{key}"), step, t, float(value))
        elif kind == "eval":
            cols.add("eval", step, t, _num(rec.get("mean_reward")))
        elif kind == "progress" and rec.get("fps") is not None:
            cols.add("progress", step, t, _num(rec["fps"]))
        elif kind == "train":
            for key, value in rec.items():
                if key not in ("kind", "step", "t") and (value is None or isinstance(value, int | float)):
                    cols.add(("train", key), step, t, _num(value))
    arrays = cols.arrays()
    weights = arrays.get("episode_weight")
    return MetricsPart(after_break, arrays.get("episode"), arrays.get("eval"), arrays.get("progress"),
                       {k[1]: v for k, v in arrays.items() if isinstance(k, tuple)},
                       weights[2] if weights is not None else None)


def _episode_points(cols: _Collect, rec: dict[str, Any], step: Any, t: Any) -> None:
    """An episode is a point of weight 1; an aggregate of ``n`` (``core.run.episodes``) is its mean,
    weighing ``n`` in the rolling mean, then its lowest and highest reward, weighing nothing."""
    group = group_of(rec)
    if group is None:
        return
    points = [(group.reward, float(group.count))]
    if group.reward_min != group.reward_max:
        points += [(group.reward_min, 0.0), (group.reward_max, 0.0)]
    for value, weight in points:
        cols.add("episode", step, t, value)
        cols.add("episode_weight", step, t, weight)


def metrics_batch(records: list[dict[str, Any]], reset: bool = False) -> MetricsBatch:
    """Columns of a batch of ``metrics.jsonl`` records; events kept as records (the log shows them)."""
    groups: list[tuple[bool, list[dict[str, Any]]]] = [(False, [])]
    events: list[dict[str, Any]] = []
    cycles: list[dict[str, Any]] = []
    last_progress = None
    for rec in records:
        kind = rec.get("kind")
        if kind == "reset":
            groups, events, last_progress, reset, cycles = [(False, [])], [], None, True, []
        elif kind == "attempt":
            groups.append((True, []))
        elif kind == "event":
            events.append(rec)
        elif kind == CYCLE:
            cycles.append(rec)
        else:
            groups[-1][1].append(rec)
            if kind == "progress":
                last_progress = rec
    parts = [_metrics_part(recs, brk) for brk, recs in groups if recs or brk]
    split = None
    if cycles:
        split = TimeSplit()
        for rec in cycles:
            split.add_record(rec)
    return MetricsBatch(parts, events, last_progress, reset, len(records), split, cycles[-RECENT_CYCLES:])


Span = tuple[float, float, int]  # start and end time, and the slowdown reasons (NVML bits) seen in it


@dataclass
class TelemetryPart:
    after_break: bool = False
    series: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # (field, key) -> t, v
    throttled: list[Span] = field(default_factory=list)  # when any GPU's clocks were slowed, and why


def throttle_spans(lines: list[dict[str, Any]], gap_s: float = THROTTLE_GAP_S) -> list[Span]:
    """Spans where NVML named a slowdown reason (power cap, thermal, ...) for any GPU."""
    points = sorted((float(rec["t"]), slowdown(rec["throttle_reasons"])) for rec in lines
                    if isinstance(rec.get("throttle_reasons"), int) and isinstance(rec.get("t"), int | float))
    spans: list[Span] = []
    for t, mask in points:
        if not mask:
            continue
        if spans and t - spans[-1][1] <= gap_s:
            start, _, seen = spans[-1]
            spans[-1] = (start, t, seen | mask)
        else:
            spans.append((t, t, mask))
    return spans


@dataclass
class TelemetryBatch:
    parts: list[TelemetryPart]
    latest: dict[int, dict[str, Any]]  # the last line of each GPU: its limits, and what is past a threshold
    unavailable: str | None = None  # NVML is not available, and why
    reset: bool = False  # the file was rewritten (thinned): it follows in full


def _field(lines: list[dict[str, Any]], name: str, scale: float,
           times: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Times and scaled values of the lines that report ``name`` (a missing reading is no point)."""
    values = [rec.get(name) for rec in lines]
    if None not in values:  # the usual case: every line has it
        return (times, np.asarray(values, dtype=float) * scale) if values else None
    keep = [i for i, v in enumerate(values) if v is not None]
    if not keep:
        return None
    return times[keep], np.asarray([values[i] for i in keep], dtype=float) * scale


def _telemetry_part(lines: list[dict[str, Any]], after_break: bool) -> TelemetryPart:
    """One pass per field over the lines (a 12 h history is 216,000 lines: no per-line appends)."""
    series: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    by_gpu: dict[Any, list[dict[str, Any]]] = {}
    for rec in lines:
        by_gpu.setdefault(rec.get("gpu"), []).append(rec)
    for gpu, recs in by_gpu.items():
        if gpu is not None:
            times = np.asarray([rec.get("t", 0) for rec in recs], dtype=float)
            _run_gpu_memory(series, recs, gpu, times)  # first: the run's own figure leads the memory plot's legend
            for name, scale in GPU_FIELDS.items():
                if (col := _field(recs, name, scale, times)) is not None:
                    series[(name, f"gpu{gpu}")] = col
    host = by_gpu.get(None, []) + by_gpu.get(0, [])  # the run's CPU and RAM are the same on every GPU's line of a tick
    if None in by_gpu and 0 in by_gpu:
        host.sort(key=lambda rec: rec.get("t", 0))
    host_times = np.asarray([rec.get("t", 0) for rec in host], dtype=float)
    for name, scale in HOST_FIELDS.items():
        if (col := _field(host, name, scale, host_times)) is not None:
            series[(name, RUN_KEY)] = col
    for measure in dict.fromkeys(rec.get("host_memory_measure") for rec in host if rec.get("host_memory_bytes") is not None):
        of = [rec for rec in host if rec.get("host_memory_measure") == measure]
        times = np.asarray([rec.get("t", 0) for rec in of], dtype=float)
        if (col := _field(of, "host_memory_bytes", 1 / GIB, times)) is not None:
            series[("host_memory_bytes", str(measure))] = col  # keyed by its measure: "pss", "uss", "private", "rss"
    return TelemetryPart(after_break, series, throttle_spans(lines))


def _run_gpu_memory(series: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]], recs: list[dict[str, Any]],
                    gpu: Any, times: np.ndarray) -> None:
    """The run's own GPU memory, a series per measure so the plot can say which it draws: ``proc<gpu>`` NVML's
    per-process figure (the recorder names a measure beside every figure), ``wddm<gpu>`` Windows' counter,
    ``torch<gpu>`` torch's reserved memory (``RUN_GPU_SERIES``)."""
    by_key: dict[str, list[int]] = {}
    for i, rec in enumerate(recs):
        by_key.setdefault(_SERIES_OF_MEASURE.get(gpu_measure(rec.get("process_memory_source")) or "", "proc"), []).append(i)
    for key, keep in by_key.items():
        of, at = (recs, times) if len(keep) == len(recs) else ([recs[i] for i in keep], times[keep])
        if (col := _field(of, "process_memory_bytes", 1 / GIB, at)) is not None:
            series[("memory_used_bytes", f"{key}{gpu}")] = col


def telemetry_batch(samples: list[dict[str, Any]]) -> TelemetryBatch:
    """Columns of telemetry lines (the run's ``telemetry.jsonl`` or the idle monitor's samples)."""
    groups: list[tuple[bool, list[dict[str, Any]]]] = [(False, [])]
    latest: dict[int, dict[str, Any]] = {}
    unavailable = None
    reset = False
    for rec in samples:
        kind = rec.get("kind")
        if kind == "reset":
            groups, latest, unavailable, reset = [(False, [])], {}, None, True
        elif kind == "status":  # the recorder started: a new attempt of the run
            groups.append((True, []))
            if rec.get("nvml") is False:
                unavailable = rec.get("reason") or "NVML is not available"
        elif kind in (None, "agg"):
            groups[-1][1].append(rec)
            if rec.get("gpu") is not None:
                latest[int(rec["gpu"])] = rec
    parts = [_telemetry_part(lines, brk) for brk, lines in groups if lines or brk]
    if any(name in GPU_FIELDS for p in parts for name, _ in p.series):
        unavailable = None  # GPU data came after the reason
    return TelemetryBatch(parts, latest, unavailable, reset)
