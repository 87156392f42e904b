"""How the last runs on a card compared with their estimates: ``summary.json``'s
``peak_to_estimate`` (the NVML process peak over the worker's estimate, ``core.training.fit_record``).

The fit bar shows the range ("last 5 runs: 0.94-1.03 of estimate") and the estimate corrects
itself from the median (``core.fit.gpus.with_history``).
"""

from __future__ import annotations

from pathlib import Path

from core.util.files import read_json

SCAN_LIMIT = 300  # the newest run folders read: a history is about the recent runs, and listing stays cheap


def card_ratios(runs_dir: Path, uuid: str | None, last: int = 5) -> tuple[float, ...]:
    """``peak_to_estimate`` of the newest ``last`` finished runs on the card ``uuid``, newest first."""
    if not uuid:
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
        ratio = summary.get("peak_to_estimate")
        if isinstance(ratio, int | float) and not isinstance(ratio, bool) and 0.2 < ratio < 5:
            out.append(float(ratio))
            if len(out) == last:
                break
    return tuple(out)
