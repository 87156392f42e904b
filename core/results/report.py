"""The morning report: what the night did, in one table (md, html or xlsx), plus the queue and the failures.

Every run started since a time (``since_time("18:00")``: the last 18:00 before now), one row each:
its state and why (exit reason, error, or why it is paused), wall time, best and final reward,
the env's own measures against a baseline (``--baseline``, else the newest finished baseline run of
the night: random or constant), GPU energy (and CO2 at the grid intensity given), peak
temperature, and the time it was paused by the GPU guard or its clocks were slowed. Then the
queue's jobs (their state and reason) when a queue ran that night, and for each failed or crashed
run the last lines of its ``worker.log``. The queue's state is passed in (``core.queue`` reads it:
the results package does not import the queue's).
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.config.algorithms import BASELINES
from core.results.export import to_html, to_markdown, to_xlsx
from core.results.table import MEASURE, MEASURE_PCT, Column, ResultRow, columns_for, results
from core.run.layout import RunDir
from core.run.states import FAILED
from core.run.store import RunStore
from core.util.files import tail_lines

LOG_LINES = 15
KEPT = ("run_id", "name", "algo", "env", "state", "why", "wall_time_s", "best_mean_reward", "final_mean_reward",
        "energy_kwh", "co2_kg", "peak_temperature_c", "paused_s", "throttled_s")
EXTRA = {"why": Column("exit_reason", "Why"), "paused_s": Column("paused_s", "Paused", "s", "float", 0),
         "throttled_s": Column("throttled_s", "Clocks slowed", "s", "float", 0)}
REPORT_FORMATS = ("md", "html", "xlsx")


@dataclass
class MorningReport:
    since: float
    rows: list[ResultRow]
    columns: list[Column]
    baseline: str | None  # the baseline run's id
    queue: list[dict[str, Any]] = field(default_factory=list)  # the night's queue jobs: name, status, run_id, reason
    queue_state: str | None = None
    failures: dict[str, list[str]] = field(default_factory=dict)  # run id -> the last lines of its worker.log


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
            if key != "paused_s" or any(r.paused_s for r in rows):
                if key != "throttled_s" or any(r.throttled_s is not None for r in rows):
                    cols.append(EXTRA[key])
        elif key in table:
            cols.append(table[key])
    cols += [c for k, c in table.items() if k.startswith((MEASURE, MEASURE_PCT))]
    return cols


def morning_report(store: RunStore, since: float, baseline: Path | None = None, grid_g_per_kwh: float | None = None,
                   queue: dict[str, Any] | None = None) -> MorningReport:
    """The report of every run started at or after ``since`` in ``store`` (``queue``: the queue's state, if any)."""
    infos = sorted((i for i in store.list() if (i.started_at or i.created_at or 0) >= since and not i.broken),
                   key=lambda i: i.started_at or i.created_at or 0)
    if baseline is None:
        bases = [i for i in infos if i.algo in BASELINES and i.state == "finished"]
        baseline = bases[-1].path if bases else None
    rows = results([i.path for i in infos], baseline=baseline, grid_g_per_kwh=grid_g_per_kwh)
    failures = {i.id: tail_lines(RunDir(i.path).worker_log, LOG_LINES) for i in infos if i.state in FAILED}
    jobs: list[dict[str, Any]] = []
    if queue and float(queue.get("created_at") or 0) >= since - 12 * 3600:  # the night's queue (made before it started)
        jobs = [j for j in queue.get("jobs") or [] if isinstance(j, dict)]
    return MorningReport(since, rows, report_columns(rows), baseline.name if baseline else None, jobs,
                         str(queue.get("state")) if jobs and queue else None, failures)


def _title(report: MorningReport) -> str:
    start = time.strftime("%Y-%m-%d %H:%M", time.localtime(report.since))
    ended = sum(1 for r in report.rows if r.state == "finished")
    failed = sum(1 for r in report.rows if r.state in FAILED)
    base = f"; measures against the baseline {report.baseline}" if report.baseline else ""
    return f"Runs since {start}: {len(report.rows)} ({ended} finished, {failed} failed or crashed){base}"


def _queue_lines(report: MorningReport) -> list[list[str]]:
    return [["Job", "Status", "Run", "Reason"]] + [
        [str(j.get("name") or ""), str(j.get("status") or ""), str(j.get("run_id") or ""), str(j.get("reason") or "")]
        for j in report.queue]


def to_report_markdown(report: MorningReport) -> str:
    out = [f"# {_title(report)}", "", to_markdown(report.rows, report.columns) if report.rows else "No runs.\n"]
    if report.queue:
        lines = _queue_lines(report)
        out += [f"## Queue ({report.queue_state})", "", "| " + " | ".join(lines[0]) + " |", "|---|---|---|---|"]
        out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |" for line in lines[1:]]
        out.append("")
    for run_id, log in report.failures.items():
        out += [f"## {run_id}: the end of worker.log", "", "```", *log, "```", ""]
    return "\n".join(out)


def to_report_html(report: MorningReport) -> str:
    esc = html.escape
    out = [f"<h1>{esc(_title(report))}</h1>", to_html(report.rows, report.columns) if report.rows else "<p>No runs.</p>"]
    if report.queue:
        lines = _queue_lines(report)
        out.append(f"<h2>Queue ({esc(str(report.queue_state))})</h2><table><tr>"
                   + "".join(f"<th>{esc(c)}</th>" for c in lines[0]) + "</tr>")
        out += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in line) + "</tr>" for line in lines[1:]]
        out.append("</table>")
    for run_id, log in report.failures.items():
        out.append(f"<h2>{esc(run_id)}: the end of worker.log</h2><pre>{esc(chr(10).join(log))}</pre>")
    return "\n".join(out) + "\n"


def to_report_xlsx(report: MorningReport) -> bytes:
    sheets: dict[str, list[list[Any]]] = {}
    if report.queue:
        sheets["Queue"] = [list(line) for line in _queue_lines(report)]
    if report.failures:
        sheets["Failures"] = [["Run", "worker.log"]] + [[run_id, line] for run_id, lines in report.failures.items()
                                                        for line in lines]
    return to_xlsx(report.rows, report.columns, sheets)


def render(report: MorningReport, fmt: str) -> str | bytes:
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(REPORT_FORMATS)}")
    if fmt == "xlsx":
        return to_report_xlsx(report)
    return to_report_markdown(report) if fmt == "md" else to_report_html(report)


