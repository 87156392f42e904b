"""The results table: one row per run, computed from its run folder (no Qt, no torch).

A row comes from ``summary.json`` when the run wrote one for its current state, else from
``metrics.jsonl`` + ``status.json`` + ``telemetry.jsonl``, so a crashed run (which never writes
a summary) still gets its numbers. Rows of runs that did not finish are kept and marked.
``COLUMNS`` (``core.results.table_columns``, with ``ResultRow``) is the one list of columns behind every export
format and the window's table; ``columns_for(rows)`` says which of them a table of those rows shows, with headers
that name the real number of episodes behind a figure, and one column per setting in which the runs differ.

The env's own measures (``env.info_keys``, recorded with each episode) are columns of their own,
each with its change against the baseline in per cent ("co2_kg vs baseline: -29.0 %").

The change against a baseline compares evaluations when both runs have them (a baseline's
fixed policy is evaluated by all of its episodes), else the means of the last training episodes;
each delta carries its standard error and says which figures and how many episodes it compares.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple

from core.config.algorithms.baselines import BASELINES
from core.results.settings_diff import differences, run_settings
from core.results.table_columns import (
    COLUMNS,
    ENGINE_KEYS,
    LEGEND,
    MARK,
    MEASURE,
    MEASURE_PCT,
    OPTIONAL_KEYS,
    Column,
    ResultRow,
    columns_for,
    window_text,
)
from core.run.evaluations import Evaluation, latest_evaluation
from core.run.layout import RunDir
from core.run.resume_words import summary as auto_resume_summary
from core.run.states import TERMINAL
from core.run.status import RunStatus
from core.run.store import RunStore, run_info
from core.run.summary import summarize
from core.run.summary_file import read_summary
from core.run.time_split import TimeSplit
from core.telemetry.energy import co2_kg
from core.telemetry.host import measure_name
from core.telemetry.summary import gpu_memory_peaks, host_memory_peak, telemetry_summary

MIB = 2**20
__all__ = ["COLUMNS", "ENGINE_KEYS", "LEGEND", "MARK", "MEASURE", "MEASURE_PCT", "OPTIONAL_KEYS", "Column", "ResultRow",
           "columns_for", "result_row", "results", "select_runs", "window_text"]  # the table's shape: table_columns


# --- one run ----------------------------------------------------------------------------------

def _summary_for(run_dir: Path, state: str) -> dict[str, Any] | None:
    """summary.json if it describes the run as it is now (a resumed run that crashed has a stale one)."""
    summary = read_summary(run_dir)  # None when missing or damaged: the row is then made from the records
    if summary is None or state not in TERMINAL or state == "crashed":
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
    if "final_window" not in summary or "final_measures" not in summary:  # a summary.json from before these figures
        summary = {**summarize(run_dir), **summary}
    gpu, host = gpu_memory_peaks(summary), host_memory_peak(summary)
    split = TimeSplit.from_json(summary.get("time_split"))
    shares = tuple(100 * s for s in split.shares() or ()) if split is not None else ()
    steps_per_s = _num(summary.get("steps_per_s"))
    wall = _num(summary.get("wall_time_s"))
    timesteps = _whole(summary.get("timesteps"))
    if steps_per_s is None and wall:
        steps_per_s = timesteps / wall
    episodes = _whole(summary.get("episodes"))
    evaluation = (summary.get("last_eval_mean_reward"), summary.get("last_eval_std_reward"), summary.get("last_eval_episodes"))
    if info.algo in BASELINES and episodes:  # a fixed policy: every episode it played evaluates it
        evaluation = (summary.get("all_mean_reward"), summary.get("all_std_reward"), episodes)
    if info.algo in BASELINES:  # it plays episodes, it does not train: no training time, no training speed
        wall = steps_per_s = None
    row = ResultRow(
        run_id=info.id, name=info.display_name or info.name, algo=info.algo, env=info.env, preset=info.preset,
        state=info.state, engine=info.engine, timesteps=timesteps, wall_time_s=wall, steps_per_s=steps_per_s, episodes=episodes,
        final_mean_reward=_num(summary.get("final_mean_reward")),
        final_window=_whole(summary.get("final_window")), final_std_reward=_num(summary.get("final_std_reward")),
        best_mean_reward=_num(summary.get("best_mean_reward")),
        eval_mean_reward=_num(evaluation[0]), eval_std_reward=_num(evaluation[1]),
        eval_episodes=_whole(evaluation[2]) or None,
        peak_run_gpu_memory_mib=gpu.run_bytes / MIB if gpu.run_bytes is not None else None,
        peak_gpu_memory_mib=gpu.card_bytes / MIB if gpu.card_bytes is not None else None,
        peak_host_memory_mib=host.memory_bytes / MIB if host else None,
        host_memory_measure=measure_name(host.measure) if host else "",
        peak_temperature_c=_num(summary.get("peak_temperature_c")), energy_kwh=_energy(run_dir, summary),
        collect_pct=shares[0] if shares else None, train_pct=shares[1] if shares else None,
        # a fixed policy (a baseline) is measured by all its episodes, a learning one by its last
        measures=_measures(summary.get("all_measures" if info.algo in BASELINES else "final_measures")),
        exit_reason=_why(info.status), attempts=max(1, info.status.attempt or 0), resumed=_resumed(info.status),
        paused_s=info.status.paused_s, throttled_s=_num(summary.get("throttled_s")),
        started_at=info.started_at or info.created_at, path=str(run_dir), settings=run_settings(run_dir))
    stored = latest_evaluation(run_dir)
    if stored is not None:
        set_stored_evaluation(row, stored)
    return row


def set_stored_evaluation(row: ResultRow, stored: Evaluation) -> None:
    """Fill ``row``'s stored-evaluation figures from ``stored`` (the run's newest in evaluations.jsonl)."""
    row.stored_eval_mean_reward, row.stored_eval_std_reward = stored.mean_reward, stored.std_reward
    row.stored_eval_checkpoint, row.stored_eval_episodes = stored.checkpoint_step, stored.episodes
    row.stored_eval_deterministic = stored.deterministic
    interval = f"95% CI [{stored.ci95[0]:,.2f}, {stored.ci95[1]:,.2f}], " if stored.ci95 else ""
    row.stored_eval_note = (f"{stored.label}, {stored.episodes} episodes, "
                            f"{'deterministic' if stored.deterministic else 'stochastic'}: mean {stored.mean_reward:,.2f} "
                            f"± {stored.std_reward:,.2f} (std), {interval}seed {stored.seed}")


def _why(status: RunStatus) -> str:
    """Why the run ended (its exit reason or error), or why it is paused; "" while it runs."""
    paused = status.pause_reason if status.state == "paused" else None
    return paused or status.exit_reason or status.error_message or ""


def _resumed(status: RunStatus) -> str:
    """How a run that ran more than once came back (the worker counts its starts in status.json's
    ``attempt``; a resume keeps the state it resumed from, a restart its time); "" for one attempt."""
    attempts = status.attempt or 0
    if attempts < 2:
        return ""
    if status.resumed_from:
        how = f"resumed after it was {status.resumed_from}"
    elif status.restarted_at:
        how = "restarted from step 0"
    else:
        how = "resumed"
    automatic = auto_resume_summary(status.auto_resume)
    return f"{how}, {attempts} attempts" + (f" ({automatic})" if automatic else "")


def _measures(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        return {}
    return {str(k): float(v) for k, v in raw.items() if _num(v) is not None and math.isfinite(v)}


def _energy(run_dir: Path, summary: dict[str, Any]) -> float | None:
    """summary.json's energy; a summary written before energy was kept: from the telemetry."""
    if "energy_kwh" in summary:
        return _num(summary.get("energy_kwh"))
    return _num(telemetry_summary(RunDir(run_dir).telemetry).get("energy_kwh"))


def _num(v: Any) -> float | None:
    """A number from summary.json, or None for anything else (a damaged file holds anything)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _whole(v: Any) -> int:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else 0


class Figure(NamedTuple):
    """A mean reward, its spread and the episodes behind it."""

    mean: float
    std: float | None
    episodes: int | None


def _stored_figure(row: ResultRow) -> Figure | None:
    if row.stored_eval_mean_reward is None:
        return None
    return Figure(row.stored_eval_mean_reward, row.stored_eval_std_reward, row.stored_eval_episodes)


def _eval_figure(row: ResultRow) -> Figure | None:
    return Figure(row.eval_mean_reward, row.eval_std_reward, row.eval_episodes) if row.eval_mean_reward is not None else None


def _train_figure(row: ResultRow) -> Figure | None:
    if row.final_mean_reward is None:
        return None
    return Figure(row.final_mean_reward, row.final_std_reward, row.final_window or None)


def standard_error(a: Figure, b: Figure) -> float | None:
    """The standard error of ``a.mean - b.mean`` (independent episodes); None without spreads."""
    if a.std is None or b.std is None or not a.episodes or not b.episodes:
        return None
    return math.sqrt(a.std ** 2 / a.episodes + b.std ** 2 / b.episodes)


def apply_baseline(rows: list[ResultRow], base: ResultRow) -> None:
    """Set each row's change of mean reward against ``base`` (per cent of |base|), its standard
    error, and which figures it compares: the stored evaluations (``rlpanel evaluate``, the newest
    of each) when both runs have one, else the periodic evaluations when both have one, else the
    means of the last training episodes."""
    base_stored, base_eval, base_train = _stored_figure(base), _eval_figure(base), _train_figure(base)
    for row in rows:
        row.measures_pct = {k: _pct(v, base.measures.get(k)) for k, v in row.measures.items()}
        row.delta_reward = row.delta_se = row.delta_reward_pct = None
        row.delta_basis = ""
        ours, ref, what = _compared(row, base, base_stored, base_eval, base_train)
        if ours is None or ref is None:
            continue
        row.delta_reward = ours.mean - ref.mean
        row.delta_reward_pct = 100.0 * row.delta_reward / abs(ref.mean) if ref.mean != 0 else None
        if row is base:
            row.delta_basis = "baseline"
            continue
        row.delta_se = standard_error(ours, ref)
        row.delta_basis = f"{what} {ours.episodes or '?'} vs {ref.episodes or '?'} ep"


def _compared(row: ResultRow, base: ResultRow, base_stored: Figure | None, base_eval: Figure | None,
              base_train: Figure | None) -> tuple[Figure | None, Figure | None, str]:
    """The figures of ``row`` and ``base`` a delta compares, and their name (the delta's basis)."""
    own_stored, own_eval = _stored_figure(row), _eval_figure(row)
    if own_stored is not None and base_stored is not None:
        return own_stored, base_stored, (f"stored eval (step {row.stored_eval_checkpoint or 0:,} vs "
                                         f"{base.stored_eval_checkpoint or 0:,}),")
    if own_eval is not None and base_eval is not None:
        return own_eval, base_eval, "eval"
    return _train_figure(row), base_train, "training, last"


def _pct(value: float, base: float | None) -> float | None:
    """The change of ``value`` against ``base`` in per cent of |base| (None without a base, or at 0)."""
    return None if base is None or base == 0 else 100.0 * (value - base) / abs(base)


def results(run_dirs: list[Path], baseline: Path | None = None,
            row: Callable[[Path], ResultRow] = result_row, grid_g_per_kwh: float | None = None) -> list[ResultRow]:
    """One row per run folder, in the given order; with ``baseline`` its row comes first and
    every row gets the change of final mean reward against it. ``row(run_dir)`` makes a fresh
    row (the window passes rows it read in the background). ``grid_g_per_kwh`` (the grid's CO2
    intensity the user set) turns each run's energy into a CO2 estimate."""
    dirs = [Path(d) for d in run_dirs]
    if baseline is not None:
        baseline = Path(baseline)
        dirs = [baseline] + [d for d in dirs if d.resolve() != baseline.resolve()]
    rows = [row(d) for d in dirs]
    for made in rows:
        made.co2_kg = co2_kg(made.energy_kwh, grid_g_per_kwh)
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
