"""The tune's table: one row per candidate (measured, refused by the estimate, or unable to run here), its text and JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.tune.knobs import Settings, short

MIB = 1 << 20
CANNOT_RUN = "cannot run here"  # the start of the note of a device's one row when the user's config could not run on it


@dataclass
class TuneRow:
    """One candidate: its settings and what was measured (``steps_per_s`` None: not measured, see ``note``).

    ``fits`` is True only for a candidate that ran here; False when the estimate (or the probe) found
    it too big; None when nothing says: it could not run, or ended before a whole cycle.
    """

    settings: Settings
    fits: bool | None
    steps_per_s: float | None = None
    host_bytes: int | None = None
    gpu_bytes: int | None = None
    changes_learning: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def cannot_run(self) -> bool:
        return self.note.startswith(CANNOT_RUN)

    def to_json(self) -> dict[str, Any]:
        return {"settings": dict(self.settings), "steps_per_s": self.steps_per_s, "host_bytes": self.host_bytes,
                "gpu_bytes": self.gpu_bytes, "fits": self.fits, "changes_learning": list(self.changes_learning),
                "note": self.note}


@dataclass
class TuneResult:
    """The rows in the order they were tried, the pick (an index into them) and the saved preset.

    ``baseline`` is the row of the user's config as it is (on its own device here, else the first
    device it ran on); ``machine`` says which machine the tune measured (``devices.machine_line``).
    """

    rows: list[TuneRow]
    pick: int | None
    preset: str | None = None
    stopped: str = ""  # why the search ended: done, budget, cancelled
    baseline: int | None = None
    machine: str = ""

    @property
    def picked(self) -> TuneRow | None:
        return self.rows[self.pick] if self.pick is not None else None

    def speedup(self) -> float | None:
        """The pick's steps/s over the user's config's, when both were measured."""
        picked = self.picked
        base = self.rows[self.baseline].steps_per_s if self.baseline is not None else None
        return picked.steps_per_s / base if picked is not None and picked.steps_per_s and base else None

    def to_json(self) -> dict[str, Any]:
        picked = self.picked
        return {"preset": self.preset, "pick": dict(picked.settings) if picked else None, "machine": self.machine,
                "table": [r.to_json() for r in self.rows], "baseline": self.baseline, "stopped": self.stopped}


COLUMNS = ("config", "steps/s", "host MiB", "GPU MiB", "fits", "learning", "note")
HEADER = f"{'#':>3}  {'config':<62} {'steps/s':>9} {'host MiB':>9} {'GPU MiB':>8} {'fits':>4}  learning"


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / MIB:,.0f}"


def cells(row: TuneRow) -> tuple[str, ...]:
    """The row's text under ``COLUMNS``; ``fits`` is ``-`` for a candidate that did not run here."""
    speed = "-" if row.steps_per_s is None else f"{row.steps_per_s:,.0f}"
    fits = "-" if row.fits is None else "yes" if row.fits else "no"
    learning = ("changes learning: " + ", ".join(row.changes_learning)) if row.changes_learning else "same"
    return short(row.settings), speed, _mib(row.host_bytes), _mib(row.gpu_bytes), fits, learning, row.note


def format_row(i: int, row: TuneRow, best: float | None = None) -> str:
    """One line of the table; a note (not measured, why) follows the figures."""
    config, speed, host, gpu, fits, learning, note = cells(row)
    star = "*" if best is not None and row.steps_per_s == best else " "
    line = f"{i:>3}{star} {config:<62} {speed:>9} {host:>9} {gpu:>8} {fits:>4}  {learning}"
    return f"{line}  ({note})" if note else line


def format_table(result: TuneResult) -> str:
    best = result.picked.steps_per_s if result.picked else None
    return "\n".join([HEADER] + [format_row(i + 1, r, best) for i, r in enumerate(result.rows)])
