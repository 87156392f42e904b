"""The tune's table: one row per candidate (measured, or refused by the estimate), its text and JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.tune.knobs import Settings, short

MIB = 1 << 20


@dataclass
class TuneRow:
    """One candidate: its settings and what was measured (``steps_per_s`` None: not measured, see ``note``)."""

    settings: Settings
    fits: bool
    steps_per_s: float | None = None
    host_bytes: int | None = None
    gpu_bytes: int | None = None
    changes_learning: list[str] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"settings": dict(self.settings), "steps_per_s": self.steps_per_s, "host_bytes": self.host_bytes,
                "gpu_bytes": self.gpu_bytes, "fits": self.fits, "changes_learning": list(self.changes_learning),
                "note": self.note}


@dataclass
class TuneResult:
    """The rows in the order they were tried, the pick (an index into them) and the saved preset."""

    rows: list[TuneRow]
    pick: int | None
    preset: str | None = None
    stopped: str = ""  # why the search ended: done, budget, cancelled

    @property
    def picked(self) -> TuneRow | None:
        return self.rows[self.pick] if self.pick is not None else None

    def to_json(self) -> dict[str, Any]:
        picked = self.picked
        return {"preset": self.preset, "pick": dict(picked.settings) if picked else None,
                "table": [r.to_json() for r in self.rows], "stopped": self.stopped}


HEADER = f"{'#':>3}  {'config':<62} {'steps/s':>9} {'host MiB':>9} {'GPU MiB':>8} {'fits':>4}  learning"


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / MIB:,.0f}"


def format_row(i: int, row: TuneRow, best: float | None = None) -> str:
    """One line of the table; a note (not measured, why) follows the figures."""
    speed = "-" if row.steps_per_s is None else f"{row.steps_per_s:,.0f}"
    star = "*" if best is not None and row.steps_per_s == best else " "
    learning = ("changes learning: " + ", ".join(row.changes_learning)) if row.changes_learning else "same"
    line = (f"{i:>3}{star} {short(row.settings):<62} {speed:>9} {_mib(row.host_bytes):>9} {_mib(row.gpu_bytes):>8} "
            f"{'yes' if row.fits else 'no':>4}  {learning}")
    return f"{line}  ({row.note})" if row.note else line


def format_table(result: TuneResult) -> str:
    best = result.picked.steps_per_s if result.picked else None
    return "\n".join([HEADER] + [format_row(i + 1, r, best) for i, r in enumerate(result.rows)])
