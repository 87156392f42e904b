"""The results table across seeds: one row per group of runs (``core.results.grouping``), with its statistics.

Each run's figure is its own summary.json figure, read through ``core.results.table.result_row`` (so a group's
numbers never disagree with the run's row or ``rlpanel runs``): the last periodic evaluation's mean
(``last_eval_mean_reward``; a random or constant baseline: the mean of all its episodes) when every run of the
table has one, else the mean of the last training episodes (``final_mean_reward``). ``Protocol`` names which.

A group's row: its seeds, the mean ± standard error, the 95 % t-interval, the IQM and its bootstrap interval
(``core.results.stats``) over the runs that finished, the env's own measures (mean ± se over the runs), the sample
budget and wall time per run; against its env's baseline group (the group holding a baseline run): the difference,
in %, its 95 % CI and p-value, the probability of improvement with its CI, and ``*`` where the CI of the difference excludes 0.
Rows carry ``value(key)``, ``marked`` and ``is_baseline`` like ``ResultRow``: every export writer takes them.

A run that did not finish (crashed, stopped, failed, still running) has a figure of the steps it made, not of its
budget: a seed killed at 4,078 of 30,208 steps pulled a group's mean from ~245 to ~182 (issue 44). So a row counts
its finished runs only and lists the others in ``left_out`` (its State says so), unless the table is asked to
include them (``include_unfinished``: ``rlpanel export/report --include-unfinished``, the Results tab's
"Count unfinished" box); then they count and the row is marked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.config.algorithms.baselines import BASELINES
from core.results.grouping import GroupBy, RunGroup, group_runs
from core.results.stats import (
    BOOTSTRAP_METHOD,
    RESAMPLES,
    SEED,
    Aggregate,
    Comparison,
    aggregate,
    compare,
    library_versions,
)
from core.results.table import MARK, Column, ResultRow, result_row, results, window_text

SIGNIFICANT = "*"
MEASURE_MEAN, MEASURE_SE = "env:", "env_se:"  # an env measure's columns: its mean over the runs and its standard error
GROUP_STATISTICS = (f"mean ± standard error (sample std / sqrt(n)); 95 % CI of the mean: t-interval; IQM: "
                    f"scipy.stats.trim_mean(x, 0.25) with a 95 % {BOOTSTRAP_METHOD} bootstrap CI ({RESAMPLES:,} resamples, "
                    f"seed {SEED})")
# said only where a group was compared with a baseline: a footer must not describe tests that were not made
BASELINE_STATISTICS = ("against the baseline: Welch's t-test (a baseline of one run: the one-sample t-test against its "
                       "figure), the probability of improvement P(X > Y) + P(X = Y)/2 from the Mann-Whitney U with a "
                       "bootstrap CI (a group of one run: neither, only the difference); "
                       f"{SIGNIFICANT} marks a difference whose 95 % CI excludes 0 (the same as p < 0.05)")
FIGURE = "figure"  # a cell for reading that holds a number with its spread or interval, as text ("12.30 ± 0.40")
MEASURE_TEXT = "env_text:"
_HEAD = (Column("group", "Group"), Column("algo", "Algorithm"), Column("env", "Env"), Column("state", "State"),
         Column("n", "Seeds", "", "int"))
_BUDGET = (Column("timesteps", "Timesteps per run", "", "int"), Column("wall_time_s", "Wall time per run", "s", "float", 1))
_DELTA, _DELTA_PCT = Column("delta", "Δ vs baseline", "", "delta", 2), Column("delta_pct", "Δ vs baseline", "%", "pct", 1)
_SIG = Column("significant", "Sig.")
_LEFT_OUT = Column("left_out_text", "Left out")
SORTED_BY = {"mean_text": "mean", "ci_text": "ci_lo", "iqm_text": "iqm", "delta_ci_text": "delta_lo", "p_text": "p_value",
             "poi_text": "poi"}
GROUP_LEGEND = f"{MARK} a run of the group did not finish (see State): its figure covers only the steps it made."
LEFT_OUT_LEGEND = ("Runs that did not finish (crashed, stopped, failed or still running) are left out of their group's "
                   "statistics and listed in Left out; --include-unfinished (the Results tab: its Count unfinished box) counts "
                   "them.")


@dataclass
class GroupRow:
    """One group of runs; ``None`` where it has no such number."""

    key: str
    group: str  # the label a view shows: the launch group's name or id, or the config
    runs: list[str]  # run ids
    paths: list[str]
    algo: str
    env: str
    seeds: list[int | None]
    values: list[float | None]  # each run's figure (the table's metric), in the order of runs
    stats: Aggregate
    state: str  # "finished", "4 finished, 1 crashed" (all counted), or "4 finished; 1 crashed left out"
    timesteps: float | None = None  # the sample budget: the mean timesteps per run
    wall_time_s: float | None = None  # the mean per run (a baseline's: none, it does not train)
    measures: dict[str, Aggregate] = field(default_factory=dict)
    is_baseline: bool = False
    vs: Comparison | None = None
    baseline_group: str = ""  # the group its comparison is with ("" when its env has no baseline)
    engine: str = "sb3"  # runtime.engine of its runs ("several": grouping by launch group may mix them)
    marked: bool = False  # a run that did not finish is counted (include_unfinished)
    left_out: list[str] = field(default_factory=list)  # runs not counted: "ID (crashed at 4,078 steps)"

    @property
    def n(self) -> int:
        return len(self.runs)

    def value(self, key: str) -> Any:
        if key.startswith(MEASURE_MEAN):
            got = self.measures.get(key[len(MEASURE_MEAN):])
            return got.mean if got else None
        if key.startswith(MEASURE_SE):
            got = self.measures.get(key[len(MEASURE_SE):])
            return got.se if got else None
        if key.startswith(MEASURE_TEXT):
            got = self.measures.get(key[len(MEASURE_TEXT):])
            return _pm(got.mean, got.se, 3) if got else None
        return self._cells().get(key, getattr(self, key, None))

    def sort_value(self, key: str) -> Any:
        """The number a cell for reading stands for (the window sorts by it)."""
        if key.startswith(MEASURE_TEXT):
            return self.value(MEASURE_MEAN + key[len(MEASURE_TEXT):])
        return self.value(SORTED_BY.get(key, key))

    def _cells(self) -> dict[str, Any]:
        s, vs = self.stats, self.vs
        cells: dict[str, Any] = {
            "runs": " ".join(self.runs), "left_out_text": "; ".join(self.left_out) or None,
            "mean": s.mean, "se": s.se, "ci_lo": _lo(s.ci95), "ci_hi": _hi(s.ci95),
            "iqm": s.iqm, "iqm_lo": _lo(s.iqm_ci95), "iqm_hi": _hi(s.iqm_ci95), "seeds_text": _seeds(self.seeds),
            "mean_text": _pm(s.mean, s.se), "ci_text": _interval(s.ci95) or (s.note or None),
            "iqm_text": None if s.iqm is None else f"{s.iqm:,.2f} {_interval(s.iqm_ci95) or ''}".strip()}
        if vs is not None:
            cells |= {"delta": vs.delta, "delta_pct": vs.pct, "delta_lo": _lo(vs.delta_ci95), "delta_hi": _hi(vs.delta_ci95),
                      "p_value": vs.p_value, "poi": vs.prob_improvement, "poi_lo": _lo(vs.prob_improvement_ci95),
                      "poi_hi": _hi(vs.prob_improvement_ci95),
                      "significant": SIGNIFICANT if vs.significant else ("" if vs.significant is False else "n/a"),
                      "delta_ci_text": _interval(vs.delta_ci95) or vs.test, "p_text": _p_text(vs.p_value),
                      "poi_text": None if vs.prob_improvement is None else
                      f"{vs.prob_improvement:.2f} {_interval(vs.prob_improvement_ci95) or ''}".strip()}
        return cells

    def to_json(self) -> dict[str, Any]:
        s, vs = self.stats, self.vs
        out: dict[str, Any] = {
            "group": self.group, "key": self.key, "runs": self.runs, "n": self.n, "seeds": self.seeds, "algo": self.algo,
            "engine": self.engine, "env": self.env, "state": self.state, "values": self.values, "mean": s.mean, "se": s.se,
            "ci95": list(s.ci95) if s.ci95 else None, "iqm": s.iqm, "iqm_ci95": list(s.iqm_ci95) if s.iqm_ci95 else None,
            "note": s.note, "timesteps": self.timesteps, "wall_time_s": self.wall_time_s,
            "measures": {k: {"mean": m.mean, "se": m.se, "n": m.n} for k, m in self.measures.items()},
            "is_baseline": self.is_baseline, "left_out": self.left_out, "vs_baseline": None}
        if vs is not None and not self.is_baseline:
            out["vs_baseline"] = {
                "baseline": self.baseline_group, "delta": vs.delta, "pct": vs.pct,
                "delta_ci95": list(vs.delta_ci95) if vs.delta_ci95 else None, "p_value": vs.p_value, "test": vs.test,
                "prob_improvement": {"value": vs.prob_improvement,
                                     "ci95": list(vs.prob_improvement_ci95) if vs.prob_improvement_ci95 else None},
                "significant": vs.significant}
        return out


def _lo(ci: tuple[float, float] | None) -> float | None:
    return ci[0] if ci else None


def _hi(ci: tuple[float, float] | None) -> float | None:
    return ci[1] if ci else None


def _pm(mean: float | None, se: float | None, digits: int = 2) -> str | None:
    if mean is None:
        return None
    return f"{mean:,.{digits}f}" + (f" ± {se:,.{digits}f}" if se is not None else "")


def _interval(ci: tuple[float, float] | None, digits: int = 2) -> str | None:
    return f"[{ci[0]:,.{digits}f}, {ci[1]:,.{digits}f}]" if ci else None


def _p_text(p: float | None) -> str | None:
    if p is None:
        return None
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def _seeds(seeds: list[int | None]) -> str:
    return ", ".join("?" if s is None else str(s) for s in seeds)


@dataclass
class GroupTable:
    """The rows, their columns, and the protocol behind them (a footer in every format, ``protocol`` in JSON)."""

    rows: list[GroupRow]
    columns: list[Column]  # data: one number a cell (csv, xlsx)
    reading: list[Column]  # for reading: a figure with its spread in one cell (md, tex, html, the window)
    protocol: dict[str, Any]
    notes: list[str]  # the footer's lines: the protocol in words

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "groups": [r.to_json() for r in self.rows]}


# --- the metric ----------------------------------------------------------------------------------

def metric_of(rows: list[ResultRow]) -> str:
    """``last_eval_mean_reward`` when every run has an evaluation (a baseline: all its episodes), else
    ``final_mean_reward``."""
    return "last_eval_mean_reward" if rows and all(r.eval_mean_reward is not None for r in rows) else "final_mean_reward"


def figure(row: ResultRow, metric: str) -> float | None:
    return row.eval_mean_reward if metric == "last_eval_mean_reward" else row.final_mean_reward


def metric_header(metric: str, rows: list[ResultRow]) -> str:
    if metric == "last_eval_mean_reward":
        return "Eval mean reward"
    return f"Final mean reward (last {window_text({r.final_window for r in rows if r.final_window})} ep)"


def _episodes(metric: str, rows: list[ResultRow]) -> str:
    if metric == "last_eval_mean_reward":
        counts = {r.eval_episodes for r in rows if r.eval_episodes and r.algo not in BASELINES}
        base = [r for r in rows if r.algo in BASELINES]
        text = f"{window_text(counts)} episodes per evaluation" if counts else ""
        extra = "all episodes of each random or constant baseline" if base else ""
        return "; ".join(t for t in (text, extra) if t)
    return f"the last {window_text({r.final_window for r in rows if r.final_window})} training episodes of each run"


# --- building ------------------------------------------------------------------------------------

def group_table(rows: list[ResultRow], groups: list[RunGroup], by: GroupBy,
                baselines: list[Path] | None = None, include_unfinished: bool = False) -> GroupTable:
    """One row per group of ``groups`` (made from the run folders of ``rows``). ``baselines``: runs whose groups are
    their env's baseline (one per env; ValueError names two of one env); the baseline groups come first.
    ``include_unfinished``: count the runs that did not finish (else left out and listed)."""
    by_path = {str(Path(r.path).resolve()): r for r in rows}
    counted = rows if include_unfinished else [r for r in rows if not r.marked]
    metric = metric_of(counted or rows)
    made = [_row(g, [by_path[str(Path(p).resolve())] for p in g.runs if str(Path(p).resolve()) in by_path], metric,
                 include_unfinished) for g in groups]
    made = [m for m in made if m.runs or m.left_out]
    _compare(made, _baseline_groups(made, baselines or []))
    made.sort(key=lambda m: not m.is_baseline)  # stable: the baselines first, then the groups' own order
    return GroupTable(made, group_columns(made, metric, rows), reading_columns(made, metric, rows),
                      protocol(made, metric, rows, by, include_unfinished),
                      notes(made, metric, rows, by))


def group_results(run_dirs: list[Path], by: GroupBy = "group", baselines: list[Path] | None = None,
                  row: Callable[[Path], ResultRow] = result_row, grid_g_per_kwh: float | None = None,
                  include_unfinished: bool = False) -> GroupTable:
    """The group table of ``run_dirs`` (and of the ``baselines`` runs, read too when not among them)."""
    dirs = [Path(d) for d in run_dirs]
    seen = {d.resolve() for d in dirs}
    every = [Path(b) for b in baselines or [] if Path(b).resolve() not in seen] + dirs
    made = results(every, row=row, grid_g_per_kwh=grid_g_per_kwh)
    return group_table(made, group_runs(every, by), by, baselines, include_unfinished)


def _row(group: RunGroup, every: list[ResultRow], metric: str, include_unfinished: bool = False) -> GroupRow:
    every = sorted(every, key=lambda r: (_seed(r) is None, _seed(r) or 0, r.run_id))  # seeds 0, 1, 2 in every format
    members = every if include_unfinished else [r for r in every if not r.marked]
    left = [] if include_unfinished else [r for r in every if r.marked]
    values = [figure(r, metric) for r in members]
    envs = {r.env for r in every}
    algos = {r.algo for r in every}
    engines = {r.engine for r in every}
    state = _state_text(members, left)
    measure_keys = list(dict.fromkeys(k for r in members for k in r.measures))
    walls = [r.wall_time_s for r in members if r.wall_time_s is not None]
    return GroupRow(
        key=group.key, group=group.label, runs=[r.run_id for r in members], paths=[r.path for r in members],
        algo=next(iter(algos)) if len(algos) == 1 else "several", env=next(iter(envs)) if len(envs) == 1 else "several",
        seeds=[_seed(r) for r in members], engine=next(iter(engines)) if len(engines) == 1 else "several",
        values=values, stats=aggregate([v for v in values if v is not None]),
        state=state, timesteps=sum(r.timesteps for r in members) / len(members) if members else None,
        wall_time_s=sum(walls) / len(walls) if walls else None,
        measures={k: aggregate([r.measures[k] for r in members if k in r.measures]) for k in measure_keys},
        marked=any(r.marked for r in members), left_out=[f"{r.run_id} ({r.state} at {r.timesteps:,} steps)" for r in left])


def _state_text(members: list[ResultRow], left: list[ResultRow]) -> str:
    """``finished``; ``4 finished, 1 crashed`` (all counted); ``2 finished; 1 crashed left out``."""
    def counts(rows: list[ResultRow]) -> str:
        states: dict[str, int] = {}
        for r in rows:
            states[r.state] = states.get(r.state, 0) + 1
        return ", ".join(f"{n} {s}" for s, n in states.items())

    counted = "finished" if members and all(r.state == "finished" for r in members) and not left else \
        (counts(members) or "0 finished")
    return f"{counted}; {counts(left)} left out" if left else counted


def _seed(row: ResultRow) -> int | None:
    seed = row.settings.get("runtime.seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def _baseline_groups(made: list[GroupRow], baselines: list[Path]) -> dict[str, GroupRow]:
    """Env -> its baseline group: the group holding a baseline run."""
    out: dict[str, GroupRow] = {}
    for path in baselines:
        where = str(Path(path).resolve())
        holder = next((m for m in made if where in {str(Path(p).resolve()) for p in m.paths}), None)
        if holder is None:
            continue
        if holder.env in out and out[holder.env] is not holder:
            raise ValueError(f"{out[holder.env].group} and {holder.group} are both baselines of {holder.env}: "
                             "name one baseline run per env")
        out[holder.env] = holder
    return out


def _compare(made: list[GroupRow], bases: dict[str, GroupRow]) -> None:
    for m in made:
        base = bases.get(m.env)
        if base is None:
            continue
        m.baseline_group = base.group
        if m is base:
            m.is_baseline = True
            continue
        m.vs = compare([v for v in m.values if v is not None], [v for v in base.values if v is not None])


# --- columns and protocol ---------------------------------------------------------------------------

def group_columns(made: list[GroupRow], metric: str, rows: list[ResultRow]) -> list[Column]:
    """The data columns (csv, xlsx): one number each, intervals as low and high."""
    header = metric_header(metric, rows)
    cols = [*_HEAD, Column("seeds_text", "Seed values"), Column("runs", "Runs"),
            Column("mean", f"{header}, mean", "", "float", 2), Column("se", "± std. error", "", "float", 2),
            Column("ci_lo", "95% CI low", "", "float", 2), Column("ci_hi", "95% CI high", "", "float", 2),
            Column("iqm", "IQM", "", "float", 2), Column("iqm_lo", "IQM 95% CI low", "", "float", 2),
            Column("iqm_hi", "IQM 95% CI high", "", "float", 2), *_BUDGET, *_left_out(made)]
    for key in dict.fromkeys(k for m in made for k in m.measures):
        cols += [Column(MEASURE_MEAN + key, f"{key}, mean", "", "float", 3),
                 Column(MEASURE_SE + key, f"{key} ± se", "", "float", 3)]
    if any(m.is_baseline for m in made):
        cols += [_DELTA, _DELTA_PCT, Column("delta_lo", "Δ 95% CI low", "", "float", 2),
                 Column("delta_hi", "Δ 95% CI high", "", "float", 2), Column("p_value", "p-value", "", "float", 4),
                 Column("poi", "P(improvement)", "", "float", 2), Column("poi_lo", "P(impr.) 95% CI low", "", "float", 2),
                 Column("poi_hi", "P(impr.) 95% CI high", "", "float", 2), _SIG]
    return cols


def _left_out(made: list[GroupRow]) -> list[Column]:
    """The Left out column, where a group left a run out."""
    return [_LEFT_OUT] if any(m.left_out for m in made) else []


def reading_columns(made: list[GroupRow], metric: str, rows: list[ResultRow]) -> list[Column]:
    """The columns for reading (md, tex, html, the window): ``mean ± se`` and ``[low, high]`` in one cell each."""
    cols = [*_HEAD, Column("mean_text", f"{metric_header(metric, rows)}, mean ± se", kind=FIGURE),
            Column("ci_text", "95% CI", kind=FIGURE), Column("iqm_text", "IQM [95% CI]", kind=FIGURE), *_BUDGET,
            *_left_out(made)]
    cols += [Column(MEASURE_TEXT + key, f"{key}, mean ± se", kind=FIGURE)
             for key in dict.fromkeys(k for m in made for k in m.measures)]
    if any(m.is_baseline for m in made):
        cols += [_DELTA, _DELTA_PCT, Column("delta_ci_text", "Δ 95% CI", kind=FIGURE),
                 Column("p_text", "p-value", kind=FIGURE), Column("poi_text", "P(improvement) [95% CI]", kind=FIGURE), _SIG]
    return cols


def statistics(made: list[GroupRow]) -> str:
    """The statistics in words: the tests against a baseline only where a group was compared with one."""
    tested = any(m.is_baseline for m in made)
    return f"{GROUP_STATISTICS}; {BASELINE_STATISTICS if tested else 'no baseline: no test'}; rliable's estimators " \
           "computed with scipy"


def protocol(made: list[GroupRow], metric: str, rows: list[ResultRow], by: GroupBy,
             include_unfinished: bool = False) -> dict[str, Any]:
    """What the numbers are: the metric and its episodes, deterministic or not, the seeds, the statistics, versions."""
    tested = any(m.is_baseline for m in made)
    return {"metric": metric, "metric_header": metric_header(metric, rows), "episodes": _episodes(metric, rows),
            "deterministic": metric == "last_eval_mean_reward",
            "group_by": by, "seeds": {m.group: m.seeds for m in made},
            "unfinished_runs": "counted" if include_unfinished else "left out",
            "baselines": {m.env: m.group for m in made if m.is_baseline},
            "statistics": statistics(made), "bootstrap": {"method": BOOTSTRAP_METHOD, "resamples": RESAMPLES, "seed": SEED},
            "significance": f"{SIGNIFICANT}: the 95 % CI of the difference excludes 0 (p < 0.05)" if tested else None,
            "versions": library_versions()}


def notes(made: list[GroupRow], metric: str, rows: list[ResultRow], by: GroupBy) -> list[str]:
    """The footer: the protocol in words."""
    how = "deterministic evaluations" if metric == "last_eval_mean_reward" else "stochastic training episodes"
    versions = ", ".join(f"{k} {v}" for k, v in library_versions().items())
    seeds = "; ".join(f"{m.group}: {m.n}" for m in made)
    grouped = "the group they were launched in" if by == "group" else \
        "config (all settings but the seed and others that change nothing learned)"
    bare = list(dict.fromkeys(m.env for m in made if not m.baseline_group))
    out = [f"Metric: {metric} ({metric_header(metric, rows)}; {_episodes(metric, rows)}; {how}); "
           "each run's own summary.json figure.",
           f"Runs grouped by {grouped}; seeds per group: {seeds}.",
           f"Statistics: {statistics(made)}.",
           *([f"No baseline run of {' or '.join(bare)}: {'its' if len(bare) == 1 else 'their'} groups are compared "
              "with none."] if bare else []),
           f"Computed with {versions}."]
    return out + ([GROUP_LEGEND] if any(m.marked for m in made) else []) + \
        ([LEFT_OUT_LEGEND] if any(m.left_out for m in made) else [])
