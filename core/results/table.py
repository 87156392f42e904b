"""The results table: one row per run, computed from its run folder (no Qt, no torch).

A row comes from ``summary.json`` when the run wrote one for its current state, else from
``metrics.jsonl`` + ``status.json`` + ``telemetry.jsonl``, so a crashed run (which never writes
a summary) still gets its numbers. Rows of runs that did not finish are kept and marked.
``COLUMNS`` is the one list of columns behind every export format and the window's table.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple

from core.results.settings_diff import differences, run_settings
from core.run.layout import RunDir
from core.run.states import TERMINAL
from core.run.store import RunStore, run_info
from core.run.summary import REWARD_WINDOW, summarize
from core.util.files import read_json

MIB = 2**20


class Column(NamedTuple):
    """One column of the results table: ``kind`` is text | int | float | delta | pct."""

    key: str
    header: str
    unit: str = ""
    kind: str = "text"
    digits: int = 0  # decimals when rounded for reading (md, tex, html, the window)

    @property
    def title(self) -> str:
        return f"{self.header} ({self.unit})" if self.unit else self.header


COLUMNS: list[Column] = [
    Column("run_id", "Run"),
    Column("name", "Name"),
    Column("algo", "Algorithm"),
    Column("env", "Env"),
    Column("preset", "Preset"),
    Column("state", "State"),
    Column("timesteps", "Timesteps", "", "int"),
    Column("wall_time_s", "Wall time", "s", "float", 1),
    Column("steps_per_s", "Steps/s", "", "float", 0),
    Column("episodes", "Episodes", "", "int"),
    Column("final_mean_reward", f"Final mean reward ({REWARD_WINDOW} ep)", "", "float", 2),
    Column("best_mean_reward", f"Best rolling mean ({REWARD_WINDOW} ep)", "", "float", 2),
    Column("eval_mean_reward", "Eval mean", "", "float", 2),
    Column("eval_std_reward", "Eval std", "", "float", 2),
    Column("peak_gpu_memory_mib", "Peak GPU memory", "MiB", "float", 0),
    Column("peak_temperature_c", "Peak temperature", "°C", "float", 0),
    Column("delta_reward", "Δ vs baseline", "", "delta", 2),
    Column("delta_reward_pct", "Δ vs baseline", "%", "pct", 1),
    Column("differs", "Settings that differ"),
]
DELTA_KEYS = ("delta_reward", "delta_reward_pct")
MARK = "†"
LEGEND = f"{MARK} the run did not finish (see State): its numbers cover only the steps it made."


@dataclass
class ResultRow:
    """What one run achieved; ``None`` where the run has no such number."""

    run_id: str
    name: str | None
    algo: str
    env: str
    preset: str | None
    state: str
    timesteps: int = 0
    wall_time_s: float | None = None
    steps_per_s: float | None = None
    episodes: int = 0
    final_mean_reward: float | None = None
    best_mean_reward: float | None = None
    eval_mean_reward: float | None = None
    eval_std_reward: float | None = None
    peak_gpu_memory_mib: float | None = None
    peak_temperature_c: float | None = None
    delta_reward: float | None = None
    delta_reward_pct: float | None = None
    differs: str = ""  # the settings in which the compared runs differ, with this run's values
    is_baseline: bool = False
    started_at: float | None = None
    path: str = ""
    settings: dict[str, Any] = field(default_factory=dict, repr=False)  # run_settings(), to compare runs

    @property
    def marked(self) -> bool:
        """A run that did not finish (crashed, stopped, failed, still running): its row is marked."""
        return self.state != "finished"

    def value(self, key: str) -> Any:
        return getattr(self, key)

    def to_json(self) -> dict[str, Any]:
        out = {**asdict(self), "marked": self.marked}
        del out["settings"]
        return out


def columns_for(rows: list[ResultRow]) -> list[Column]:
    """The columns of a table of ``rows``: the delta columns only when there is a baseline, the
    differing settings only when the runs differ in some."""
    with_baseline = any(r.is_baseline for r in rows)
    differ = any(r.differs for r in rows)
    return [c for c in COLUMNS
            if (with_baseline or c.key not in DELTA_KEYS) and (differ or c.key != "differs")]


# --- one run ----------------------------------------------------------------------------------

def _summary_for(run_dir: Path, state: str) -> dict[str, Any] | None:
    """summary.json if it describes the run as it is now (a resumed run that crashed has a stale one)."""
    summary = read_json(RunDir(run_dir).summary, default=None)
    if not isinstance(summary, dict) or state not in TERMINAL or state == "crashed":
        return None
    if summary.get("state") not in (None, state):
        return None
    return summary


def result_row(run_dir: Path) -> ResultRow:
    """The row of one run folder."""
    run_dir = Path(run_dir)
    info = run_info(run_dir)
    summary = _summary_for(run_dir, info.state)
    if summary is None:
        summary = summarize(run_dir)
    peak_mem = _num(summary.get("peak_gpu_memory_bytes"))
    steps_per_s = _num(summary.get("steps_per_s"))
    wall = _num(summary.get("wall_time_s"))
    timesteps = _whole(summary.get("timesteps"))
    if steps_per_s is None and wall:
        steps_per_s = timesteps / wall
    return ResultRow(
        run_id=info.id, name=info.name, algo=info.algo, env=info.env, preset=info.preset, state=info.state,
        timesteps=timesteps, wall_time_s=wall, steps_per_s=steps_per_s,
        episodes=_whole(summary.get("episodes")), final_mean_reward=_num(summary.get("final_mean_reward")),
        best_mean_reward=_num(summary.get("best_mean_reward")),
        eval_mean_reward=_num(summary.get("last_eval_mean_reward")),
        eval_std_reward=_num(summary.get("last_eval_std_reward")),
        peak_gpu_memory_mib=peak_mem / MIB if peak_mem is not None else None,
        peak_temperature_c=_num(summary.get("peak_temperature_c")),
        started_at=info.started_at or info.created_at, path=str(run_dir), settings=run_settings(run_dir))


def _num(v: Any) -> float | None:
    """A number from summary.json, or None for anything else (a damaged file holds anything)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _whole(v: Any) -> int:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else 0


def apply_baseline(rows: list[ResultRow], base: ResultRow) -> None:
    """Set each row's change of final mean reward against ``base`` (per cent of |base|)."""
    ref = base.final_mean_reward
    for row in rows:
        if ref is None or row.final_mean_reward is None:
            row.delta_reward = row.delta_reward_pct = None
            continue
        row.delta_reward = row.final_mean_reward - ref
        row.delta_reward_pct = 100.0 * row.delta_reward / abs(ref) if ref != 0 else None


def results(run_dirs: list[Path], baseline: Path | None = None,
            row: Callable[[Path], ResultRow] = result_row) -> list[ResultRow]:
    """One row per run folder, in the given order; with ``baseline`` its row comes first and
    every row gets the change of final mean reward against it. ``row(run_dir)`` makes a fresh
    row (the window passes rows it read in the background)."""
    dirs = [Path(d) for d in run_dirs]
    if baseline is not None:
        baseline = Path(baseline)
        dirs = [baseline] + [d for d in dirs if d.resolve() != baseline.resolve()]
    rows = [row(d) for d in dirs]
    if baseline is not None:
        rows[0].is_baseline = True
        apply_baseline(rows, rows[0])
    for made, text in zip(rows, differences([(r.algo, r.settings) for r in rows]), strict=True):
        made.differs = text
    return rows


# --- choosing runs ------------------------------------------------------------------------------

def select_runs(store: RunStore, ids: list[str] | None = None, all: bool = False,  # noqa: A002 (the CLI's word)
                since: date | None = None, states: list[str] | tuple[str, ...] | None = None) -> list[Path]:
    """Run folders by id (a unique prefix is enough; KeyError names a bad one), or every run
    (oldest first, the order a night ran in); then only those started on or after ``since``
    (local date) and in ``states``."""
    if ids:
        infos = [run_info(store.path(i)) for i in ids]
    elif all:
        infos = sorted(store.list(), key=lambda i: i.started_at or i.created_at or 0)
    else:
        infos = []
    if since is not None:
        infos = [i for i in infos if _local_date(i.started_at or i.created_at) >= since]
    if states:
        infos = [i for i in infos if i.state in states]
    return [i.path for i in infos]


def _local_date(ts: float | None) -> date:
    return datetime.fromtimestamp(ts if ts is not None else time.time()).date()
