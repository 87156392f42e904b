"""Column batches as a cache chunk and back: the meta (JSON) and the arrays ``core.run.cache.history`` stores.

A batch read back from the cache equals the one parsed from the same bytes of the JSONL (the
tests compare them), so the plots cannot tell the two apart. A batch's ``reset`` is not kept: a
chunk always continues the one before it (the cache starts over when its source does).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from core.run.cache.columns import (
    GPU_FIELDS,
    RECENT_CYCLES,
    Columns,
    MetricsBatch,
    MetricsPart,
    TelemetryBatch,
    TelemetryPart,
)
from core.run.time_split import TimeSplit


class _Arrays:
    """Arrays put in a list, each named in the meta by its index (None stays None)."""

    def __init__(self, arrays: list[np.ndarray] | None = None):
        self.arrays: list[np.ndarray] = arrays if arrays is not None else []

    def put(self, array: np.ndarray | None) -> int | None:
        if array is None:
            return None
        self.arrays.append(array)
        return len(self.arrays) - 1

    def get(self, index: int | None) -> np.ndarray | None:
        return None if index is None else self.arrays[index]

    def put_cols(self, cols: Columns | None) -> list[int | None] | None:
        return None if cols is None else [self.put(a) for a in cols]

    def get_cols(self, ref: list[int] | None) -> Columns | None:
        return None if ref is None else (self.arrays[ref[0]], self.arrays[ref[1]], self.arrays[ref[2]])


def encode_metrics(batch: MetricsBatch) -> tuple[dict[str, Any], list[np.ndarray]]:
    out = _Arrays()
    parts = [{"after_break": p.after_break, "episodes": out.put_cols(p.episodes), "evals": out.put_cols(p.evals),
              "progress": out.put_cols(p.progress), "train": [[k, out.put_cols(v)] for k, v in p.train.items()],
              "episode_weights": out.put(p.episode_weights)} for p in batch.parts]
    meta = {"kind": "metrics", "parts": parts, "events": batch.events, "last_progress": batch.last_progress,
            "records": batch.records, "time_split": asdict(batch.time_split) if batch.time_split else None,
            "recent_cycles": batch.recent_cycles}
    return meta, out.arrays


def decode_metrics(meta: dict[str, Any], arrays: list[np.ndarray]) -> MetricsBatch:
    src = _Arrays(arrays)
    parts = []
    for p in meta["parts"]:
        train = {key: cols for key, ref in p["train"] if (cols := src.get_cols(ref)) is not None}
        parts.append(MetricsPart(p["after_break"], src.get_cols(p["episodes"]), src.get_cols(p["evals"]),
                                 src.get_cols(p["progress"]), train, src.get(p["episode_weights"])))
    split = meta.get("time_split")  # a chunk cached before the time split has none
    return MetricsBatch(parts, meta["events"], meta["last_progress"], False, meta["records"],
                        TimeSplit(**split) if isinstance(split, dict) else None, meta.get("recent_cycles") or [])


def encode_telemetry(batch: TelemetryBatch) -> tuple[dict[str, Any], list[np.ndarray]]:
    out = _Arrays()
    parts = [{"after_break": p.after_break, "throttled": p.throttled,
              "series": [[name, key, out.put(t), out.put(v)] for (name, key), (t, v) in p.series.items()]}
             for p in batch.parts]
    meta = {"kind": "telemetry", "parts": parts, "latest": [[gpu, rec] for gpu, rec in batch.latest.items()],
            "unavailable": batch.unavailable}
    return meta, out.arrays


def decode_telemetry(meta: dict[str, Any], arrays: list[np.ndarray]) -> TelemetryBatch:
    parts = [TelemetryPart(p["after_break"], {(name, key): (arrays[t], arrays[v]) for name, key, t, v in p["series"]},
                           [(float(a), float(b), int(m)) for a, b, m in p["throttled"]])
             for p in meta["parts"]]
    return TelemetryBatch(parts, {int(gpu): rec for gpu, rec in meta["latest"]}, meta["unavailable"], False)


def decode(meta: dict[str, Any], arrays: list[np.ndarray]) -> MetricsBatch | TelemetryBatch:
    """The batch a chunk holds, by its kind."""
    return decode_metrics(meta, arrays) if meta.get("kind") == "metrics" else decode_telemetry(meta, arrays)


def merged(batches: list[MetricsBatch | TelemetryBatch]) -> MetricsBatch | TelemetryBatch:
    """One batch of several of one kind that follow each other (none a reset): what the window takes in one go."""
    metrics = [b for b in batches if isinstance(b, MetricsBatch)]
    if metrics:
        progress = [b.last_progress for b in metrics if b.last_progress is not None]
        split = None
        for m in metrics:
            if m.time_split is not None:
                split = split or TimeSplit()
                split.add(m.time_split)
        return MetricsBatch([p for b in metrics for p in b.parts], [e for b in metrics for e in b.events],
                            progress[-1] if progress else None, False, sum(b.records for b in metrics), split,
                            [c for b in metrics for c in b.recent_cycles][-RECENT_CYCLES:])
    latest: dict[int, dict[str, Any]] = {}
    unavailable = None
    parts: list[TelemetryPart] = []
    for b in batches:
        assert isinstance(b, TelemetryBatch)
        latest.update(b.latest)
        parts += b.parts
        gpu_data = any(name in GPU_FIELDS for p in b.parts for name, _ in p.series)
        unavailable = b.unavailable or (None if gpu_data else unavailable)
    return TelemetryBatch(parts, latest, unavailable, False)


def joined(batch: TelemetryBatch) -> TelemetryBatch:
    """``batch`` with each part that continues the one before it (no break between: chunks of one attempt) joined to
    it, so a series of the history is one array the window can cut to screen resolution as a whole."""
    groups: list[list[TelemetryPart]] = []
    for part in batch.parts:
        if not groups or part.after_break:
            groups.append([])
        groups[-1].append(part)
    parts = []
    for group in groups:
        pieces: dict[tuple[str, str], list[tuple[np.ndarray, np.ndarray]]] = {}
        for part in group:
            for key, columns in part.series.items():
                pieces.setdefault(key, []).append(columns)
        series = {key: cols[0] if len(cols) == 1 else (np.concatenate([t for t, _ in cols]), np.concatenate([v for _, v in cols]))
                  for key, cols in pieces.items()}
        parts.append(TelemetryPart(group[0].after_break, series, [span for part in group for span in part.throttled]))
    return TelemetryBatch(parts, batch.latest, batch.unavailable, batch.reset)
