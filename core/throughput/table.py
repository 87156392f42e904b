"""The tune's table: one row per candidate (measured, refused by the estimate, or unable to run here), its text and JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.throughput.knobs import Settings, short

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
    collect_pct: float | None = None  # of the measured cycles' time, collecting (env steps and inference)
    train_pct: float | None = None  # ... and training (gradient steps): where the probe's time went

    @property
    def cannot_run(self) -> bool:
        return self.note.startswith(CANNOT_RUN)

    @property
    def engine(self) -> str:
        """The engine the row trained with (``sb3``, ``sbx``): a column of its own."""
        return str(self.settings.get("runtime.engine", "sb3"))

    def to_json(self) -> dict[str, Any]:
        return {"settings": dict(self.settings), "engine": self.engine, "steps_per_s": self.steps_per_s,
                "host_bytes": self.host_bytes, "gpu_bytes": self.gpu_bytes, "fits": self.fits,
                "changes_learning": list(self.changes_learning), "note": self.note, "collect_pct": self.collect_pct,
                "train_pct": self.train_pct}


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


COLUMNS = ("config", "engine", "steps/s", "host MiB", "GPU MiB", "collect/train %", "fits", "learning", "note")
HEADER = (f"{'#':>3}  {'config':<62} {'engine':<6} {'steps/s':>9} {'host MiB':>9} {'GPU MiB':>8} {'collect/train %':>15} "
          f"{'fits':>4}  learning")


def split_pcts(collect_s: float | None, train_s: float | None) -> tuple[float | None, float | None]:
    """A probe's collecting and training as per cent of their sum (a probe has no checkpoints or evaluations)."""
    if collect_s is None or train_s is None or collect_s + train_s <= 0:
        return None, None
    total = collect_s + train_s
    return 100 * collect_s / total, 100 * train_s / total


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / MIB:,.0f}"


def cells(row: TuneRow) -> tuple[str, ...]:
    """The row's text under ``COLUMNS``; ``fits`` is ``-`` for a candidate that did not run here."""
    speed = "-" if row.steps_per_s is None else f"{row.steps_per_s:,.0f}"
    fits = "-" if row.fits is None else "yes" if row.fits else "no"
    learning = ("changes learning: " + ", ".join(row.changes_learning)) if row.changes_learning else "same"
    split = "-" if row.collect_pct is None or row.train_pct is None else f"{row.collect_pct:.0f}/{row.train_pct:.0f}"
    return short(row.settings), row.engine, speed, _mib(row.host_bytes), _mib(row.gpu_bytes), split, fits, learning, row.note


def format_row(i: int, row: TuneRow, best: float | None = None) -> str:
    """One line of the table; a note (not measured, why) follows the figures."""
    config, engine, speed, host, gpu, split, fits, learning, note = cells(row)
    star = "*" if best is not None and row.steps_per_s == best else " "
    line = f"{i:>3}{star} {config:<62} {engine:<6} {speed:>9} {host:>9} {gpu:>8} {split:>15} {fits:>4}  {learning}"
    return f"{line}  ({note})" if note else line


def format_table(result: TuneResult) -> str:
    best = result.picked.steps_per_s if result.picked else None
    return "\n".join([HEADER] + [format_row(i + 1, r, best) for i, r in enumerate(result.rows)])


def pick_reason(result: TuneResult) -> str:
    """Why the pick is faster, from where the user's config spent its probe's time (its collect/train split)."""
    picked, base = result.picked, result.rows[result.baseline] if result.baseline is not None else None
    if picked is None or base is None or base.collect_pct is None or base.train_pct is None:
        return ""
    if picked is base:
        phase, pct = ("collecting", base.collect_pct) if base.collect_pct >= base.train_pct else ("training", base.train_pct)
        return f"your config is the fastest here; {phase} takes {pct:.0f} % of its time"
    changed = [f"{key.rpartition('.')[2]} {base.settings.get(key, '-')} -> {value}" for key, value in picked.settings.items()
               if base.settings.get(key) != value]
    what = ", ".join(changed) or "its settings"
    if base.collect_pct >= 50:
        helped = "more envs helped" if any(k.endswith("n_envs") for k in picked.settings
                                            if base.settings.get(k) != picked.settings[k]) else f"{what} helped"
        return f"collecting took {base.collect_pct:.0f} % of your config's time: {helped} ({what})"
    return f"training took {base.train_pct:.0f} % of your config's time: {what} helped"
