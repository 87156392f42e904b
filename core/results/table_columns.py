"""The results table's shape: what one row holds (``ResultRow``), the columns (``COLUMNS``) behind every export
format and the window's table, and which of them a table of given rows shows (``columns_for``).

``core.results.table`` reads the rows from run folders; this module knows nothing of run folders.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from core.results.settings_diff import differing_paths
from core.run.episodes import REWARD_WINDOW


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
