"""The morning report: the night's runs (state and why, rewards, env measures vs the baseline, energy),
its queue, and the end of each failed run's log, as md, html and xlsx; ``rlpanel report``."""

from __future__ import annotations

import io
import json
import time
from datetime import datetime

import pytest

from core.results.report import morning_report, render, since_time
from core.run.store import RunStore
from core.run.summary import summarize
from core.util.files import read_json, write_json_atomic
from tests.results_helpers import make_result_run
from tests.training_helpers import cli


def with_measures(run, co2: float):
    """Give every episode of a fake run the env measure co2_kg, and summarise it again."""
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    for rec in lines:
        if rec["kind"] == "episode":
            rec["m"] = {"co2_kg": co2}
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    summary = {**read_json(run / "summary.json"), **{k: v for k, v in summarize(run).items() if k.endswith("measures")}}
    write_json_atomic(run / "summary.json", summary)
    return run


def night(runs_dir):
    now = time.time()
    make_result_run(runs_dir, "last-week", [1.0], started_at=now - 7 * 86400)
    base = with_measures(make_result_run(runs_dir, "base", [0.5, 0.5], algo="random", started_at=now - 3 * 3600), 10.0)
    agent = with_measures(make_result_run(runs_dir, "agent", [1.0, 3.0], started_at=now - 2 * 3600), 7.0)
    failed = make_result_run(runs_dir, "broke", [2.0], state="failed", started_at=now - 3600)
    (failed / "worker.log").write_text("".join(f"line {i}\n" for i in range(30)) + "ValueError: bad action\n")
    queue = {"created_at": now - 4 * 3600, "state": "finished",
             "jobs": [{"name": "agent", "status": "finished", "run_id": agent.name, "reason": None},
                      {"name": "broke", "status": "failed", "run_id": failed.name, "reason": "test run failed"}]}
    return now, base, agent, failed, queue


def test_the_report_covers_the_night_against_its_baseline_with_the_queue_and_failures(runs_dir):
    from openpyxl import load_workbook

    now, base, agent, failed, queue = night(runs_dir)
    report = morning_report(RunStore(runs_dir), now - 86400, grid_g_per_kwh=400, queue=queue)
    assert [r.name for r in report.rows] == ["base", "agent", "broke"]  # the baseline first; last week's run left out
    assert report.baseline == base.name  # the night's newest finished baseline, found without being named
    md = render(report, "md")
    assert md.startswith("# Runs since") and "3 (2 finished, 1 failed or crashed)" in md
    assert "| State | Why |" in md and "| Wall time (s) |" in md
    assert "test run failed" in md and "co2_kg vs baseline (%)" in md and "-30.0 %" in md
    assert "## Queue (finished)" in md and f"| broke | failed | {failed.name} | test run failed |" in md
    assert f"## {failed.name}: the end of worker.log" in md and "ValueError: bad action" in md and "line 10" not in md
    html = render(report, "html")
    assert "<h2>Queue (finished)</h2>" in html and "ValueError: bad action" in html
    book = load_workbook(io.BytesIO(render(report, "xlsx")))
    assert book.sheetnames == ["Results", "Queue", "Failures"]
    header = [c.value for c in book["Results"][1]]
    assert header[:6] == ["Run", "Name", "Algorithm", "Env", "State", "Why"]
    assert book["Results"].cell(3, header.index("co2_kg vs baseline (%)") + 1).value == pytest.approx(-30.0)
    assert [c.value for c in book["Queue"][3]] == ["broke", "failed", failed.name, "test run failed"]
    assert book["Failures"].cell(book["Failures"].max_row, 2).value == "ValueError: bad action"


def test_since_reads_a_clock_time_as_the_last_one_before_now():
    morning = datetime(2026, 11, 26, 7, 0)
    assert datetime.fromtimestamp(since_time("18:00", morning)) == datetime(2026, 11, 25, 18, 0)
    assert datetime.fromtimestamp(since_time("18:00", datetime(2026, 11, 25, 19, 0))) == datetime(2026, 11, 25, 18, 0)
    assert datetime.fromtimestamp(since_time("2026-11-20 21:30")) == datetime(2026, 11, 20, 21, 30)
    with pytest.raises(ValueError, match="HH:MM"):
        since_time("tonight")


def test_rlpanel_report(runs_dir, tmp_path):
    now, base, agent, failed, queue = night(runs_dir)
    since = datetime.fromtimestamp(now - 86400).strftime("%Y-%m-%d %H:%M")
    out = cli("report", "--since", since, "--runs-dir", str(runs_dir))
    assert out.returncode == 0, out.stderr
    assert "# Runs since" in out.stdout and "broke" in out.stdout and "last-week" not in out.stdout
    target = tmp_path / "morning.xlsx"
    out = cli("report", "--since", since, "--runs-dir", str(runs_dir), "-o", str(target))
    assert out.returncode == 0 and target.stat().st_size > 0, out.stderr
    bad = cli("report", "--since", "tonight", "--runs-dir", str(runs_dir))
    assert bad.returncode == 2 and "--since" in bad.stderr and "HH:MM" in bad.stderr
    xlsx = cli("report", "--format", "xlsx", "--runs-dir", str(runs_dir))
    assert xlsx.returncode == 2 and "-o" in xlsx.stderr
