"""How the last runs on a card compared with their estimates: ``summary.json``'s
``peak_to_estimate`` (the run's own GPU memory peak over the worker's estimate, ``core.worker.fit_record``).

The fit bar shows the range ("last 5 runs: 0.94-1.03 of estimate") and the estimate corrects
itself from the median (``core.estimate.gpus.with_history``).

Like for like only. The estimate models the whole process, CUDA context included, so a card's
history is read per measure (``core.telemetry.gpu_measure``) and only of the two whole-process
ones: ``torch_reserved`` leaves out the ~740 MiB of context and would pull the median down, and a
summary that names no measure is left out as unknown. ``nvml_process`` (NVML's figure) and
``wddm_counter`` (Windows' counter: what a process committed on the card) are not mixed in one
median either: nobody has compared them side by side on one card yet. A card's history is of the
measure of its newest whole-process run: the next run on this machine is read the way it was
(the driver model of a card, WDDM or TCC, changes only when someone changes it).

Nor engines: an SBX run's estimate is XLA's arrays beside a CUDA context, a torch run's torch's allocator; each is
corrected from the runs of its own engine (``estimate_engine``; a summary without one is SB3's, from before SBX).
"""

from __future__ import annotations

from pathlib import Path

from core.telemetry.gpu_measure import WHOLE_PROCESS
from core.telemetry.summary import gpu_memory_peaks
from core.util.files import read_json

SCAN_LIMIT = 300  # the newest run folders read: a history is about the recent runs, and listing stays cheap


def card_ratios(runs_dir: Path, uuid: str | None, last: int = 5, measure: str | None = None,
                engine: str = "sb3") -> tuple[float, ...]:
    """``peak_to_estimate`` of the newest ``last`` finished runs of ``engine`` on the card ``uuid`` measured by
    ``measure`` (default: the measure of the newest whole-process run on it), newest first."""
    if not uuid or (measure is not None and measure not in WHOLE_PROCESS):
        return ()
    try:
        folders = sorted((p for p in Path(runs_dir).iterdir() if p.is_dir() and not p.name.startswith(".")),
                         key=lambda p: p.name, reverse=True)[:SCAN_LIMIT]
    except OSError:
        return ()
    out: list[float] = []
    for folder in folders:
        summary = read_json(folder / "summary.json", default=None)
        if not isinstance(summary, dict) or summary.get("gpu_uuid") != uuid:
            continue
        if (summary.get("estimate_engine") or "sb3") != engine:
            continue
        ratio = summary.get("peak_to_estimate")
        if not (isinstance(ratio, int | float) and not isinstance(ratio, bool) and 0.2 < ratio < 5):
            continue
        of = gpu_memory_peaks(summary).run_measure
        if of not in WHOLE_PROCESS or (measure is not None and of != measure):
            continue
        measure = of  # the newest whole-process run's measure: the history's
        out.append(float(ratio))
        if len(out) == last:
            break
    return tuple(out)
