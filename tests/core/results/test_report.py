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
    assert report.baselines == {"CartPole-v1": base.name}  # the env's newest finished baseline, found without being named
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


def two_envs(runs_dir):
    """CartPole with two finished baselines (the newer one a failure's neighbour), Pendulum with a baseline from
    last week and a newer failed one, Acrobot with none."""
    now = time.time()
    runs = {
        "cart-old": with_measures(make_result_run(runs_dir, "cart-old", [0.5], algo="random", started_at=now - 5 * 3600), 10.0),
        "cart-new": with_measures(make_result_run(runs_dir, "cart-new", [0.5], algo="random", started_at=now - 4 * 3600), 20.0),
        "cart-agent": with_measures(make_result_run(runs_dir, "cart-agent", [1.0], started_at=now - 3 * 3600), 10.0),
        "pend-base": with_measures(make_result_run(runs_dir, "pend-base", [-900.0], algo="constant", env="Pendulum-v1",
                                                   started_at=now - 7 * 86400), 4.0),
        "pend-broke": with_measures(make_result_run(runs_dir, "pend-broke", [-1.0], algo="random", env="Pendulum-v1",
                                                    state="failed", started_at=now - 2 * 3600), 99.0),
        "pend-agent": with_measures(make_result_run(runs_dir, "pend-agent", [-200.0], algo="SAC", env="Pendulum-v1",
                                                    started_at=now - 3600), 6.0),
        "acro-agent": with_measures(make_result_run(runs_dir, "acro-agent", [-100.0], env="Acrobot-v1",
                                                    started_at=now - 1800), 1.0),
    }
    return now, runs


def test_each_env_is_compared_with_its_own_baseline_and_an_env_without_one_says_so(runs_dir):
    now, runs = two_envs(runs_dir)
    report = morning_report(RunStore(runs_dir), now - 86400)
    assert report.baselines == {"CartPole-v1": runs["cart-new"].name, "Pendulum-v1": runs["pend-base"].name,
                                "Acrobot-v1": None}
    rows = {r.name: r for r in report.rows}
    # grouped by env, each env's baseline first; last week's Pendulum baseline is still Pendulum's
    assert [r.name for r in report.rows] == ["cart-new", "cart-old", "cart-agent", "pend-base", "pend-broke",
                                             "pend-agent", "acro-agent"]
    assert rows["cart-agent"].measures_pct["co2_kg"] == pytest.approx(-50.0)  # 10 against the newest CartPole's 20
    assert rows["pend-agent"].measures_pct["co2_kg"] == pytest.approx(50.0)  # 6 against Pendulum's 4, not CartPole's
    assert rows["acro-agent"].measures_pct.get("co2_kg") is None and rows["acro-agent"].measures["co2_kg"] == 1.0
    assert rows["acro-agent"].baseline_run == "none: no finished random or constant run of Acrobot-v1"
    assert rows["cart-agent"].baseline_run == "cart-new" and rows["pend-base"].baseline_run == "this run"  # by its name
    md = render(report, "md")
    assert "| Baseline |" in md and "none: no finished random or constant run of Acrobot-v1" in md
    assert f"CartPole-v1: {runs['cart-new'].name}" in md.splitlines()[0]

    named = morning_report(RunStore(runs_dir), now - 86400, baselines=[runs["cart-old"]])  # the user's choice for CartPole
    rows = {r.name: r for r in named.rows}
    assert named.baselines["CartPole-v1"] == runs["cart-old"].name and named.baselines["Pendulum-v1"] == runs["pend-base"].name
    assert rows["cart-agent"].measures_pct["co2_kg"] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="both baselines of CartPole-v1"):
        morning_report(RunStore(runs_dir), now - 86400, baselines=[runs["cart-old"], runs["cart-new"]])


def test_rlpanel_report_takes_a_baseline_per_env(runs_dir):
    now, runs = two_envs(runs_dir)
    since = datetime.fromtimestamp(now - 86400).strftime("%Y-%m-%d %H:%M")
    out = cli("report", "--since", since, "--runs-dir", str(runs_dir), "--json",
              "--baseline", runs["cart-old"].name, "--baseline", runs["pend-broke"].name)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["baselines"] == {"CartPole-v1": runs["cart-old"].name, "Pendulum-v1": runs["pend-broke"].name,
                                 "Acrobot-v1": None}
    pend = next(r for r in data["rows"] if r["name"] == "pend-agent")
    assert pend["measures_pct"]["co2_kg"] == pytest.approx(100 * (6 - 99) / 99)
    same = cli("report", "--since", since, "--runs-dir", str(runs_dir), "--baseline", runs["cart-old"].name,
               "--baseline", runs["cart-new"].name)
    assert same.returncode == 2 and "both baselines of CartPole-v1" in same.stderr and "--baseline" in same.stderr
    missing = cli("report", "--runs-dir", str(runs_dir), "--baseline", "nosuchrun")
    assert missing.returncode != 0 and "--baseline" in missing.stderr and "rlpanel runs" in missing.stderr


def finished_sweep(runs_dir, name: str, values: list[float], launched_at: float, ended_at: float | None):
    """A sweep folder as the runner leaves it: sweep.yaml, a study with ``values`` told, and state.json."""
    from core.sweep.folder import SweepFolder, save_spec_data, write_state
    from core.sweep.spec import parse_sweep, spec_data
    from core.sweep.study import open_study
    from tests.core.sweep.helpers import SMALL_SWEEP

    spec = parse_sweep({**SMALL_SWEEP, "name": name}, "sweep.yaml")
    folder = SweepFolder(runs_dir, name)
    save_spec_data(folder, spec_data(spec))
    study = open_study(spec, folder)
    for n, value in enumerate(values):
        trial = study.ask()
        trial.set_user_attr("run_id", f"{name}-run-{n}")
        study.tell(trial, value)
    study.ask()  # one still running: not done
    write_state(folder, {"name": name, "state": "finished" if ended_at else "running", "launched_at": launched_at,
                         "created_at": launched_at, "ended_at": ended_at})
    return folder


def test_the_report_shows_reward_against_the_baseline_resumed_runs_and_the_nights_sweeps(runs_dir):
    from core.sweep.control import sweeps_since

    now, base, agent, failed, queue = night(runs_dir)
    status = read_json(agent / "status.json")
    write_json_atomic(agent / "status.json", {**status, "attempt": 2, "resumed_from": "stopped"})
    other = make_result_run(runs_dir, "acro", [-80.0], env="Acrobot-v1", started_at=now - 1800)
    finished_sweep(runs_dir, "tonight", [120.0, 480.5], launched_at=now - 5 * 3600, ended_at=now - 600)
    finished_sweep(runs_dir, "last-week", [7.0], launched_at=now - 8 * 86400, ended_at=now - 7 * 86400)
    since = now - 86400
    sweeps = sweeps_since(runs_dir, since)
    assert [s["name"] for s in sweeps] == ["tonight"]  # last week's sweep ended before the night
    assert sweeps[0]["trials_done"] == 2 and sweeps[0]["n_trials"] == 6 and sweeps[0]["best_value"] == 480.5
    assert sweeps[0]["best_run"] == "tonight-run-1"

    report = morning_report(RunStore(runs_dir), since, queue=queue, sweeps=sweeps)
    rows = {r.name: r for r in report.rows}
    assert rows["agent"].delta_reward == pytest.approx(2.0 - 0.5)  # its mean reward over the baseline's
    assert rows["agent"].resumed == "resumed after it was stopped, 2 attempts" and rows["broke"].resumed == ""
    md = render(report, "md")
    header = next(line for line in md.splitlines() if line.startswith("| Run |"))
    assert "| Reward vs baseline |" in header and "| Attempts |" in header
    agent_line = next(line for line in md.splitlines() if f"| {agent.name} |" in line)
    acro_line = next(line for line in md.splitlines() if f"| {other.name} |" in line)
    assert "| +1.50 |" in agent_line and "resumed after it was stopped, 2 attempts" in agent_line
    assert "| – |" in acro_line  # Acrobot has no baseline tonight
    assert "Reward vs baseline: the run's mean reward minus its env's baseline" in md
    assert "## Sweeps" in md and "| tonight | finished | 2 of 6 | 480.50 (tonight-run-1) (maximize eval_mean_reward) |" in md
    assert "last-week |" not in md.split("## Sweeps")[1]
    html = render(report, "html")
    assert "<h2>Sweeps</h2>" in html and "<td>2 of 6</td>" in html and "Reward vs baseline" in html
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(render(report, "xlsx")))
    assert [c.value for c in book["Sweeps"][2]][:5] == ["tonight", "finished", 2, 6, 480.5]

    out = cli("report", "--since", datetime.fromtimestamp(since).strftime("%Y-%m-%d %H:%M"), "--runs-dir",
              str(runs_dir), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [s["name"] for s in data["sweeps"]] == ["tonight"]
    assert next(r for r in data["rows"] if r["name"] == "agent")["resumed"].startswith("resumed")
    text = cli("report", "--since", datetime.fromtimestamp(since).strftime("%Y-%m-%d %H:%M"), "--runs-dir", str(runs_dir))
    assert "## Sweeps" in text.stdout and "| Reward vs baseline |" in text.stdout
