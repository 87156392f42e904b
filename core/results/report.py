"""The morning report: what the night did, in one table (md, html or xlsx), plus the queue and the failures.

Every run started since a time (``since_time("18:00")``: the last 18:00 before now), one row each:
its state and why (exit reason, error, or why it is paused), wall time, best and final reward,
the env's own measures against a baseline of the same env (``core.results.baselines.env_baselines``: the run the user
named for that env, else the newest finished random or constant run of that env id; the row names
the baseline it was compared with, or says its env has none), GPU energy (and CO2 at the grid
intensity given), peak temperature, and the time it was paused by the GPU guard or its clocks
were slowed. Each row's reward against its env's baseline (Reward vs baseline: the difference of
the mean rewards, "–" for an env without a baseline; ``REWARD_LEGEND`` says which figures) and,
for a run whose worker started more than once, how it came back (resumed after a stop or a crash,
or restarted). Rows come grouped by env, each env's baseline first. Then the sweeps that ran
that night (name, state, trials done, best value), the queue's jobs (their state and reason)
when a queue ran that night, and for each failed or crashed run the last lines of its
``worker.log``. When runs of the night were launched as groups of seeds, a section with one row per group
(``core.results.group_table``: mean ± std. error, 95 % CI, IQM, the test against its env's baseline run's group)
and its protocol. The queue's state and the sweeps are passed in (``core.queue`` and ``core.sweep``
read them: the results package imports neither).
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.results.baselines import env_baselines
from core.results.export import to_html, to_markdown, to_xlsx
from core.results.group_table import GroupTable, group_table
from core.results.grouping import group_runs
from core.results.table import MEASURE, MEASURE_PCT, Column, ResultRow, columns_for, results
from core.run.layout import RunDir
from core.run.states import FAILED
from core.run.store import RunStore
from core.util.files import tail_lines

LOG_LINES = 15
KEPT = ("run_id", "name", "algo", "engine", "env", "state", "why", "resumed", "wall_time_s", "best_mean_reward",
        "final_mean_reward", "delta_reward", "energy_kwh", "co2_kg", "peak_temperature_c", "paused_s", "throttled_s",
        "baseline_run")
REWARD_VS_BASE = Column("delta_reward", "Reward vs baseline", "", "delta", 2)
EXTRA = {"why": Column("exit_reason", "Why"), "resumed": Column("resumed", "Attempts"),
         "delta_reward": REWARD_VS_BASE, "paused_s": Column("paused_s", "Paused", "s", "float", 0),
         "throttled_s": Column("throttled_s", "Clocks slowed", "s", "float", 0),
         "baseline_run": Column("baseline_run", "Baseline")}
REWARD_LEGEND = ("Reward vs baseline: the run's mean reward minus its env's baseline run's (their evaluations when "
                 "both have one, else the means of their last training episodes); – where the night has no "
                 "baseline for that env.")
REPORT_FORMATS = ("md", "html", "xlsx")


@dataclass
class MorningReport:
    since: float
    rows: list[ResultRow]
    columns: list[Column]
    baselines: dict[str, str | None]  # env id -> the id of the baseline run its rows compare with (None: none)
    queue: list[dict[str, Any]] = field(default_factory=list)  # the night's queue jobs: name, status, run_id, reason
    queue_state: str | None = None
    failures: dict[str, list[str]] = field(default_factory=dict)  # run id -> the last lines of its worker.log
    sweeps: list[dict[str, Any]] = field(default_factory=list)  # the night's sweeps (core.sweep.control.sweeps_since)
    groups: GroupTable | None = None  # one row per launch group, when the night launched groups of seeds


def since_time(text: str, now: datetime | None = None) -> float:
    """``HH:MM`` (the last such time before now: "18:00" read at 7:00 is yesterday's), or a date and
    time ``YYYY-MM-DD HH:MM`` / ``YYYY-MM-DDTHH:MM``, or a date; as unix time. ValueError says the forms."""
    now = now or datetime.now()
    text = text.strip()
    try:
        clock = datetime.strptime(text, "%H:%M")
    except ValueError:
        try:
            return datetime.fromisoformat(text).timestamp()
        except ValueError:
            raise ValueError(f"{text!r} is not a time: write HH:MM (e.g. 18:00) or YYYY-MM-DD HH:MM") from None
    start = now.replace(hour=clock.hour, minute=clock.minute, second=0, microsecond=0)
    return (start if start <= now else start - timedelta(days=1)).timestamp()


def report_columns(rows: list[ResultRow]) -> list[Column]:
    """The report's columns: the results table's that tell the night apart, the env's measures, and why."""
    table = {c.key: c for c in columns_for(rows)}
    cols = []
    for key in KEPT:
        if key in EXTRA:
            if (key == "baseline_run" and not any(r.baseline_run for r in rows)) or \
                    (key == "resumed" and not any(r.resumed for r in rows)):
                continue
            if key != "paused_s" or any(r.paused_s for r in rows):
                if key != "throttled_s" or any(r.throttled_s is not None for r in rows):
                    cols.append(EXTRA[key])
        elif key in table:
            cols.append(table[key])
    cols += [c for k, c in table.items() if k.startswith((MEASURE, MEASURE_PCT))]
    return cols


def morning_report(store: RunStore, since: float, baselines: list[Path] | None = None,
                   grid_g_per_kwh: float | None = None, queue: dict[str, Any] | None = None,
                   sweeps: list[dict[str, Any]] | None = None, include_unfinished: bool = False) -> MorningReport:
    """The report of every run started at or after ``since`` in ``store``, each compared with its env's
    baseline (``baselines``: runs the user named, one per env; ``queue``: the queue's state, if any;
    ``sweeps``: the sweeps that ran since then, ``core.sweep.control.sweeps_since``; ``include_unfinished``:
    the seed groups count their runs that did not finish)."""
    every = store.list()  # read once: the night's runs and the baselines from before it
    infos = sorted((i for i in every if (i.started_at or i.created_at or 0) >= since and not i.broken),
                   key=lambda i: i.started_at or i.created_at or 0)
    envs = list(dict.fromkeys(i.env for i in infos))
    chosen = env_baselines(every, envs, baselines)
    rows: list[ResultRow] = []
    for env in envs:
        base = chosen[env]
        group = results([i.path for i in infos if i.env == env], baseline=base, grid_g_per_kwh=grid_g_per_kwh)
        # the baseline by the name its row shows (the title names each env's baseline run id)
        base_name = next((r.name for r in group if r.is_baseline), None) or (base.name if base is not None else "")
        for row in group:
            row.baseline_run = ("this run" if row.is_baseline else base_name) if base is not None else \
                f"none: no finished random or constant run of {env}"
        rows += group
    failures = {i.id: tail_lines(RunDir(i.path).worker_log, LOG_LINES) for i in infos if i.state in FAILED}
    jobs: list[dict[str, Any]] = []
    if queue and float(queue.get("created_at") or 0) >= since - 12 * 3600:  # the night's queue (made before it started)
        jobs = [j for j in queue.get("jobs") or [] if isinstance(j, dict)]
    return MorningReport(since, rows, report_columns(rows), {env: p.name if p else None for env, p in chosen.items()},
                         jobs, str(queue.get("state")) if jobs and queue else None, failures, list(sweeps or []),
                         seed_groups(rows, [p for p in chosen.values() if p is not None], include_unfinished))


def seed_groups(rows: list[ResultRow], baselines: list[Path], include_unfinished: bool = False) -> GroupTable | None:
    """The table of the launch groups among ``rows`` (each env's baseline run's group its baseline); None without
    a group of more than one run."""
    groups = group_runs([Path(r.path) for r in rows], "group")
    if not any(g.n > 1 for g in groups):
        return None
    return group_table(rows, groups, "group", baselines, include_unfinished)


def _title(report: MorningReport) -> str:
    start = time.strftime("%Y-%m-%d %H:%M", time.localtime(report.since))
    ended = sum(1 for r in report.rows if r.state == "finished")
    failed = sum(1 for r in report.rows if r.state in FAILED)
    named = [f"{env}: {run}" for env, run in report.baselines.items() if run]
    base = f"; measures against each env's baseline ({', '.join(named)})" if named else ""
    return f"Runs since {start}: {len(report.rows)} ({ended} finished, {failed} failed or crashed){base}"


def _queue_lines(report: MorningReport) -> list[list[str]]:
    return [["Job", "Status", "Run", "Reason"]] + [
        [str(j.get("name") or ""), str(j.get("status") or ""), str(j.get("run_id") or ""), str(j.get("reason") or "")]
        for j in report.queue]


def _sweep_lines(report: MorningReport) -> list[list[str]]:
    def best(sweep: dict[str, Any]) -> str:
        value = sweep.get("best_value")
        if not isinstance(value, int | float):
            return "–"
        run = f" ({sweep['best_run']})" if sweep.get("best_run") else ""
        return f"{value:,.2f}{run}"

    def done(sweep: dict[str, Any]) -> str:
        return "–" if sweep.get("trials_done") is None else f"{sweep['trials_done']} of {sweep.get('n_trials')}"

    return [["Sweep", "State", "Trials done", "Best value"]] + [
        [str(s.get("name") or ""), str(s.get("state") or ""), done(s),
         best(s) + (f" ({s['direction']} {s['metric']})" if s.get("metric") and best(s) != "–" else "")]
        for s in report.sweeps]


def _md_table(lines: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(lines[0])]
    return out + ["| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |" for line in lines[1:]]


def _html_table(lines: list[list[str]]) -> str:
    esc = html.escape
    head = "<tr>" + "".join(f"<th>{esc(c)}</th>" for c in lines[0]) + "</tr>"
    return "<table>" + head + "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in line) + "</tr>"
                                      for line in lines[1:]) + "</table>"


def to_report_markdown(report: MorningReport) -> str:
    out = [f"# {_title(report)}", "", to_markdown(report.rows, report.columns) if report.rows else "No runs.\n"]
    if report.rows:
        out += [REWARD_LEGEND, ""]
    if report.groups is not None:
        out += ["## Seed groups", "", to_markdown(report.groups.rows, report.groups.reading, report.groups.notes)]
    if report.sweeps:
        out += ["## Sweeps", "", *_md_table(_sweep_lines(report)), ""]
    if report.queue:
        out += [f"## Queue ({report.queue_state})", "", *_md_table(_queue_lines(report)), ""]
    for run_id, log in report.failures.items():
        out += [f"## {run_id}: the end of worker.log", "", "```", *log, "```", ""]
    return "\n".join(out)


def to_report_html(report: MorningReport) -> str:
    esc = html.escape
    out = [f"<h1>{esc(_title(report))}</h1>", to_html(report.rows, report.columns) if report.rows else "<p>No runs.</p>"]
    if report.rows:
        out.append(f"<p>{esc(REWARD_LEGEND)}</p>")
    if report.groups is not None:
        out += ["<h2>Seed groups</h2>", to_html(report.groups.rows, report.groups.reading, report.groups.notes)]
    if report.sweeps:
        out += ["<h2>Sweeps</h2>", _html_table(_sweep_lines(report))]
    if report.queue:
        out += [f"<h2>Queue ({esc(str(report.queue_state))})</h2>", _html_table(_queue_lines(report))]
    for run_id, log in report.failures.items():
        out.append(f"<h2>{esc(run_id)}: the end of worker.log</h2><pre>{esc(chr(10).join(log))}</pre>")
    return "\n".join(out) + "\n"


def to_report_xlsx(report: MorningReport) -> bytes:
    sheets: dict[str, list[list[Any]]] = {}
    if report.groups is not None:
        cols = report.groups.columns
        sheets["Seed groups"] = [[c.title for c in cols]] + [[r.value(c.key) for c in cols] for r in report.groups.rows] + [
            []] + [[line] for line in report.groups.notes]
    if report.sweeps:
        sheets["Sweeps"] = [["Sweep", "State", "Trials done", "Trials planned", "Best value", "Objective", "Best run"]] + [
            [s.get("name"), s.get("state"), s.get("trials_done"), s.get("n_trials"), s.get("best_value"),
             f"{s.get('direction') or ''} {s.get('metric') or ''}".strip(), s.get("best_run")] for s in report.sweeps]
    if report.queue:
        sheets["Queue"] = [list(line) for line in _queue_lines(report)]
    if report.failures:
        sheets["Failures"] = [["Run", "worker.log"]] + [[run_id, line] for run_id, lines in report.failures.items()
                                                        for line in lines]
    return to_xlsx(report.rows, report.columns, sheets=sheets)


def render(report: MorningReport, fmt: str) -> str | bytes:
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(REPORT_FORMATS)}")
    if fmt == "xlsx":
        return to_report_xlsx(report)
    return to_report_markdown(report) if fmt == "md" else to_report_html(report)


