"""The results table: one row per run, computed from its run folder (no Qt, no torch).

A row comes from ``summary.json`` when the run wrote one for its current state, else from
``metrics.jsonl`` + ``status.json`` + ``telemetry.jsonl``, so a crashed run (which never writes
a summary) still gets its numbers. Rows of runs that did not finish are kept and marked.
``COLUMNS`` is the one list of columns behind every export format and the window's table;
``columns_for(rows)`` says which of them a table of those rows shows, with headers that name the
real number of episodes behind a figure, and one column per setting in which the runs differ.

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
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple

from core.config.algorithms.baselines import BASELINES
from core.results.settings_diff import differences, differing_paths, run_settings
from core.run.episodes import REWARD_WINDOW
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


class Column(NamedTuple):
    """One column of the results table: ``kind`` is text | int | float | delta | pct | setting."""

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
    Column("engine", "Engine"),
    Column("env", "Env"),
    Column("preset", "Preset"),
    Column("state", "State"),
    Column("timesteps", "Timesteps", "", "int"),
    Column("wall_time_s", "Wall time", "s", "float", 1),
    Column("steps_per_s", "Steps/s", "", "float", 0),
    Column("episodes", "Episodes", "", "int"),
    Column("final_mean_reward", f"Final mean reward (last {REWARD_WINDOW} ep)", "", "float", 2),
    Column("best_mean_reward", f"Best rolling mean ({REWARD_WINDOW} ep)", "", "float", 2),
    Column("eval_mean_reward", "Eval mean", "", "float", 2),
    Column("eval_std_reward", "Eval std", "", "float", 2),
    Column("eval_episodes", "Eval episodes", "", "int"),
    Column("stored_eval_mean_reward", "Eval mean (stored)", "", "float", 2),
    Column("stored_eval_checkpoint", "Stored eval checkpoint (step)", "", "int"),
    Column("stored_eval_episodes", "Stored eval episodes", "", "int"),
    Column("stored_eval_deterministic", "Stored eval deterministic"),
    Column("peak_run_gpu_memory_mib", "Peak GPU memory, this run's processes", "MiB", "float", 0),
    Column("peak_gpu_memory_mib", "Peak GPU memory, whole card incl. driver reserve", "MiB", "float", 0),
    Column("peak_host_memory_mib", "Peak host memory, this run", "MiB", "float", 0),
    Column("host_memory_measure", "Host memory measure"),
    Column("peak_temperature_c", "Peak temperature", "°C", "float", 0),
    Column("collect_pct", "Collecting", "% of time", "float", 0),
    Column("train_pct", "Training", "% of time", "float", 0),
    Column("energy_kwh", "GPU energy", "kWh", "float", 4),
    Column("co2_kg", "CO2 estimate", "kg", "float", 4),
    Column("delta_reward", "Δ vs baseline", "", "delta", 2),
    Column("delta_se", "± (std. error)", "", "float", 2),
    Column("delta_reward_pct", "Δ vs baseline", "%", "pct", 1),
    Column("delta_basis", "Δ compares"),
]
DELTA_KEYS = ("delta_reward", "delta_se", "delta_reward_pct", "delta_basis")
WINDOW_KEYS = ("final_mean_reward", "best_mean_reward")  # headers name the episodes behind them
STORED_EVAL_KEYS = ("stored_eval_mean_reward", "stored_eval_checkpoint", "stored_eval_episodes", "stored_eval_deterministic")
# shown only when a row has the number (NVML, a grid intensity, an rlpanel evaluate)
OPTIONAL_KEYS = ("energy_kwh", "co2_kg", "collect_pct", "train_pct", *STORED_EVAL_KEYS)
ENGINE_KEYS = ("engine",)  # shown once a row trains with another engine than SB3 (every row's JSON has it)
SETTING = "setting:"  # key prefix of a per-setting column: "setting:ppo.n_epochs"
MEASURE, MEASURE_PCT = "env:", "env_vs_base:"  # an env measure's column, and its change against the baseline
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
    engine: str = "sb3"  # runtime.engine: sb3 (PyTorch) or sbx (JAX)
    timesteps: int = 0
    wall_time_s: float | None = None
    steps_per_s: float | None = None
    episodes: int = 0
    final_mean_reward: float | None = None
    final_window: int = 0  # the episodes behind final_mean_reward (up to REWARD_WINDOW)
    final_std_reward: float | None = None
    best_mean_reward: float | None = None
    eval_mean_reward: float | None = None
    eval_std_reward: float | None = None
    eval_episodes: int | None = None
    # the newest stored evaluation (rlpanel evaluate, the Runs tab's Evaluate...: evaluations.jsonl)
    stored_eval_mean_reward: float | None = None
    stored_eval_std_reward: float | None = None
    stored_eval_checkpoint: int | None = None  # the step of the checkpoint it evaluated
    stored_eval_episodes: int | None = None
    stored_eval_deterministic: bool | None = None
    stored_eval_note: str = ""  # its interval, seed and checkpoint as asked (last, best, a step): a tooltip
    peak_run_gpu_memory_mib: float | None = None  # this run's own processes (its measure: core.telemetry.gpu_measure)
    peak_gpu_memory_mib: float | None = None  # the whole card: other programs and the driver's reserve included
    peak_host_memory_mib: float | None = None  # the run's processes, each by its own memory (host_memory_measure)
    host_memory_measure: str = ""  # PSS | USS | private bytes | RSS sum (core.telemetry.host.MEASURE_NAMES)
    peak_temperature_c: float | None = None
    collect_pct: float | None = None  # the share of the update cycles' time spent collecting (core.run.time_split)
    train_pct: float | None = None  # ... and training (gradient steps)
    energy_kwh: float | None = None  # the GPU energy over the run (NVML's counter, else its power samples)
    co2_kg: float | None = None  # energy_kwh at the grid intensity the user set (results(grid_g_per_kwh=...))
    delta_reward: float | None = None
    delta_se: float | None = None  # standard error of the delta, from both runs' spreads and episodes
    delta_reward_pct: float | None = None
    delta_basis: str = ""  # which figures the delta compares: "eval, 10 vs 20 ep"
    differs: str = ""  # the settings in which the compared runs differ, with this run's values
    is_baseline: bool = False
    baseline_run: str = ""  # the run its deltas compare with (the morning report: its env's), or why none
    started_at: float | None = None
    path: str = ""
    settings: dict[str, Any] = field(default_factory=dict, repr=False)  # run_settings(), to compare runs
    exit_reason: str = ""  # why it ended (or why it is paused): the morning report's "Why"
    attempts: int = 1  # times its worker started (status.json's attempt): more than one, it was resumed or restarted
    resumed: str = ""  # "resumed after it was stopped, 2 attempts": what the morning report flags; "" for one attempt
    paused_s: float | None = None  # time the GPU guard held it paused
    throttled_s: float | None = None  # time NVML said the GPU's clocks were slowed
    measures: dict[str, float] = field(default_factory=dict)  # the env's own measures (env.info_keys), mean per episode
    measures_pct: dict[str, float | None] = field(default_factory=dict)  # their change against the baseline, in %

    @property
    def marked(self) -> bool:
        """A run that did not finish (crashed, stopped, failed, still running): its row is marked."""
        return self.state != "finished"

    def value(self, key: str) -> Any:
        if key.startswith(SETTING):
            return self.settings.get(key[len(SETTING):])
        if key.startswith(MEASURE):
            return self.measures.get(key[len(MEASURE):])
        if key.startswith(MEASURE_PCT):
            return self.measures_pct.get(key[len(MEASURE_PCT):])
        return getattr(self, key)

    def to_json(self) -> dict[str, Any]:
        out = {**asdict(self), "marked": self.marked}
        del out["settings"]
        return out


def window_text(windows: set[int]) -> str:
    """``100`` or ``20-100``: the episodes behind the rows' means."""
    if not windows:
        return str(REWARD_WINDOW)
    low, high = min(windows), max(windows)
    return str(low) if low == high else f"{low}-{high}"


def columns_for(rows: list[ResultRow]) -> list[Column]:
    """The columns of a table of ``rows``: the delta columns only when there is a baseline; headers
    that say over how many episodes the means are and which measure the host memory is (a column
    of its own when the rows differ: runs recorded before own memory have the RSS sum only); one
    column per setting the runs differ in."""
    with_baseline = any(r.is_baseline for r in rows)
    window = window_text({r.final_window for r in rows if r.final_window})
    measures = {r.host_memory_measure for r in rows if r.peak_host_memory_mib is not None}
    cols = []
    for c in COLUMNS:
        if c.key in DELTA_KEYS and not with_baseline:
            continue
        if c.key in OPTIONAL_KEYS and all(r.value(c.key) is None for r in rows):
            continue
        if c.key in ENGINE_KEYS and all(r.engine == "sb3" for r in rows):
            continue
        if c.key == "final_mean_reward":
            c = c._replace(header=f"Final mean reward (last {window} ep)")
        elif c.key == "best_mean_reward":
            c = c._replace(header=f"Best rolling mean ({window} ep)")
        elif c.key == "peak_host_memory_mib" and len(measures) == 1:
            c = c._replace(header=f"Peak host memory, this run, {next(iter(measures))}")
        elif c.key == "host_memory_measure" and len(measures) < 2:
            continue  # one measure: the header above names it
        cols.append(c)
    keys = list(dict.fromkeys(k for r in rows for k in r.measures))
    for key in keys:  # the env's own measures, each with its change against the baseline
        cols.append(Column(MEASURE + key, key, "", "float", 3))
        if with_baseline:
            cols.append(Column(MEASURE_PCT + key, f"{key} vs baseline", "%", "pct", 1))
    paths = differing_paths([(r.algo, r.settings) for r in rows])
    return cols + [Column(SETTING + p, p, kind="setting") for p in paths]


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
