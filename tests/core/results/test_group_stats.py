"""Tables across seeds: the statistics checked against numpy, the significance marker, the group table in every
export format with its protocol footer, ``rlpanel export --group-by`` (json), the summary across envs, the morning
report's groups. Runs are written by hand (``make_result_run``) with known figures: no training."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import openpyxl
import pytest
from scipy import stats as sps

from core.cli.main import main
from core.results.export import export_table
from core.results.group_table import SIGNIFICANT, group_results
from core.results.multienv import multi_env_summary, parse_references
from core.results.profile_svg import profile_svg
from core.results.report import morning_report, to_report_markdown
from core.results.stats import aggregate, compare, iqm, performance_profile, probability_of_improvement, stratified_iqm
from core.run.status import write_status
from core.run.store import RunStore
from tests.results_helpers import make_result_run

rng = np.random.default_rng(27)
GOOD = (100 + rng.normal(0, 1, 5)).round(3).tolist()  # 5 seeds at 100 ± 1
POOR = (10 + rng.normal(0, 1, 5)).round(3).tolist()  # 5 seeds at 10 ± 1
CLOSE = (10.5 + rng.normal(0, 1, 5)).round(3).tolist()  # overlapping POOR


def seeds_run(runs_dir, group: str, finals: list[float], algo: str = "A2C", env: str = "CartPole-v1") -> list:
    """One run per figure, each playing 10 episodes of exactly that reward (its final mean), launched as ``group``."""
    out = []
    for seed, value in enumerate(finals):
        run = make_result_run(runs_dir, f"{group}-{seed}", [value] * 10, algo=algo, env=env, settings={"runtime.seed": seed})
        write_status(run, group={"id": group, "seed": seed, "size": len(finals)})
        out.append(run)
    return out


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    runs = {"poor": seeds_run(root, "poor", POOR), "good": seeds_run(root, "good", GOOD),
            "close": seeds_run(root, "close", CLOSE)}
    return root, runs


@pytest.fixture(scope="module")
def table(night):
    _, runs = night
    return group_results([*runs["poor"], *runs["good"], *runs["close"]], "group", baselines=[runs["poor"][0]])


def test_aggregate_matches_numpy_and_a_numpy_bootstrap():
    x = np.array([3.1, 7.4, 5.0, 9.9, 4.2, 6.6, 5.5, 20.0])
    got = aggregate(x.tolist())
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert got.n == 8 and got.mean == pytest.approx(x.mean()) and got.se == pytest.approx(se)
    half = sps.t.ppf(0.975, x.size - 1) * se
    assert got.ci95 == pytest.approx((x.mean() - half, x.mean() + half))
    middle = np.sort(x)[2:6]  # 8 runs: the IQM drops 2 at each end
    assert got.iqm == pytest.approx(middle.mean())
    # a percentile bootstrap of the IQM in plain numpy, with many resamples: the scipy interval is near it
    draws = np.sort(x[np.random.default_rng(1).integers(0, x.size, (20_000, x.size))], axis=1)[:, 2:6].mean(axis=1)
    lo, hi = np.percentile(draws, [2.5, 97.5])
    assert got.iqm_ci95[0] == pytest.approx(lo, abs=0.4) and got.iqm_ci95[1] == pytest.approx(hi, abs=0.4)
    assert got.iqm_ci95[0] <= got.iqm <= got.iqm_ci95[1]


def test_one_run_has_no_interval_and_two_or_three_runs_are_handled():
    one = aggregate([42.0])
    assert (one.mean, one.se, one.ci95, one.iqm_ci95) == (42.0, None, None, None) and "no interval" in one.note
    two = aggregate([1.0, 3.0])
    assert two.iqm == 2.0 and two.se == pytest.approx(1.0) and two.ci95[0] < 1.0 and two.ci95[1] > 3.0
    same = aggregate([5.0, 5.0, 5.0])
    assert same.se == 0 and same.ci95 == (5.0, 5.0) and same.iqm_ci95 == (5.0, 5.0)
    assert compare([5.0], [1.0, 2.0]).significant is None  # one run: no test, said as such
    assert "one run" in compare([5.0], [1.0, 2.0]).test


def test_probability_of_improvement_counts_pairs_with_half_ties():
    x, y = [1.0, 2.0, 3.0, 3.0], [2.0, 3.0, 0.5]
    pairs = [(a > b) + 0.5 * (a == b) for a in x for b in y]
    assert probability_of_improvement(x, y) == pytest.approx(np.mean(pairs))
    got = compare(x, y)
    assert got.prob_improvement_ci95[0] <= got.prob_improvement <= got.prob_improvement_ci95[1]


def test_significance_marked_on_an_obvious_difference_and_not_on_an_overlapping_one(table):
    rows = {r.group: r for r in table.rows}
    assert [r.group for r in table.rows][0] == "poor" and rows["poor"].is_baseline
    good, close = rows["good"], rows["close"]
    assert good.value("significant") == SIGNIFICANT and close.value("significant") == ""
    welch = sps.ttest_ind(GOOD, POOR, equal_var=False)
    assert good.vs.p_value == pytest.approx(welch.pvalue) and good.vs.delta == pytest.approx(np.mean(GOOD) - np.mean(POOR))
    assert good.vs.pct == pytest.approx(100 * (np.mean(GOOD) - np.mean(POOR)) / abs(np.mean(POOR)))
    assert good.vs.prob_improvement == 1.0 and close.vs.p_value > 0.05
    assert close.vs.delta_ci95[0] < 0 < close.vs.delta_ci95[1]
    assert good.seeds == [0, 1, 2, 3, 4] and good.values == pytest.approx(GOOD)
    assert table.protocol["metric"] == "final_mean_reward"  # no run has an evaluation: the last training episodes


def test_a_baseline_of_one_run_is_tested_with_the_one_sample_t_test():
    got = compare(GOOD, [10.0])
    assert got.p_value == pytest.approx(sps.ttest_1samp(GOOD, 10.0).pvalue) and got.significant
    assert "one-sample" in got.test


def _footer_ok(text: str) -> None:
    assert "final_mean_reward" in text and "Welch" in text and "scipy" in text and "numpy" in text and "rlpanel" in text


def test_every_export_format_carries_the_group_rows_and_the_protocol_footer(table, tmp_path):
    md = export_table(table, "md")
    assert md.count("\n| ") == 3 and "| good |" in md and "| poor |" in md and f"| {SIGNIFICANT} |" in md
    _footer_ok(md)
    rows = list(csv.reader(io.StringIO(export_table(table, "csv"))))
    header = rows[0]
    assert header[:2] == ["Group", "Algorithm"] and "95% CI low" in header and "p-value" in header
    good = next(r for r in rows if r and r[0] == "good")
    assert float(good[header.index("95% CI low")]) == pytest.approx(table.rows[1].stats.ci95[0], rel=1e-5)
    _footer_ok(" ".join(c for r in rows for c in r))

    class Cells(HTMLParser):
        cells: list[str] = []

        def handle_data(self, data):
            self.cells.append(data)

    parser = Cells()
    parser.feed(export_table(table, "html"))
    assert "good" in parser.cells and "close" in parser.cells
    _footer_ok(" ".join(parser.cells))
    export_table(table, path=tmp_path / "groups.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "groups.xlsx")["Results"]
    values = [[c.value for c in line] for line in sheet.iter_rows()]
    assert values[0][0] == "Group" and [v[0] for v in values[1:4]] == ["poor", "good", "close"]
    assert values[2][values[0].index("Seeds")] == 5
    _footer_ok(" ".join(str(v[0]) for v in values[4:]))
    _footer_ok(export_table(table, "tex").replace("\\_", "_"))


def test_the_latex_table_is_well_formed_and_compiles_where_a_latex_is_installed(table, tmp_path):
    tex = export_table(table, "tex")
    assert tex.count("{") - tex.count("\\{") == tex.count("}") - tex.count("\\}")
    spec = re.search(r"\\begin\{tabular\}\{([lr]+)\}", tex).group(1)
    body = tex[tex.index("\\midrule"):tex.index("\\bottomrule")].splitlines()[1:]
    assert len(body) == 3
    for line in body:
        assert line.endswith(r"\\") and len(re.split(r"(?<!\\)&", line)) == len(spec)
    if shutil.which("pdflatex") is None:
        pytest.skip("no pdflatex here: the table is checked for balanced braces and its column count only")
    doc = tmp_path / "t.tex"
    doc.write_text("\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage[utf8]{inputenc}\\usepackage{booktabs}\\usepackage{graphicx}"
                   "\\usepackage{textcomp}\\usepackage[landscape,margin=1cm]{geometry}\\begin{document}\\tiny\n"
                   + tex + "\\end{document}\n", encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", doc.name], cwd=tmp_path, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stdout[-2000:]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``rlpanel ARGV`` in this process (its main, as the console script runs it): (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_export_group_by_prints_json_with_the_protocol_and_each_group(night, capsys):
    root, runs = night
    base = runs["poor"][0].name
    code, stdout, err = cli(capsys, "export", "--runs-dir", str(root), "--all", "--group-by", "group", "--baseline", base,
                            "--format", "json")
    assert code == 0, err
    out = json.loads(stdout)
    assert set(out) == {"protocol", "groups"}
    assert out["protocol"]["metric"] == "final_mean_reward" and out["protocol"]["versions"]["scipy"]
    good = next(g for g in out["groups"] if g["group"] == "good")
    assert good["runs"] == [r.name for r in runs["good"]] and good["n"] == 5
    assert good["mean"] == pytest.approx(np.mean(GOOD)) and len(good["ci95"]) == 2 and len(good["iqm_ci95"]) == 2
    vs = good["vs_baseline"]
    assert {"delta", "pct", "p_value", "prob_improvement"} <= set(vs) and vs["prob_improvement"]["value"] == 1.0
    assert vs["significant"] is True


def test_summary_across_envs_normalises_by_baseline_and_reference(tmp_path):
    pole = seeds_run(tmp_path, "pole", [110.0, 120.0, 130.0, 140.0], algo="PPO")
    bot = seeds_run(tmp_path, "bot", [-60.0, -50.0, -40.0], algo="PPO", env="Acrobot-v1")
    pole_base = make_result_run(tmp_path, "rand-pole", [20.0, 20.0], algo="random")
    bot_base = make_result_run(tmp_path, "rand-bot", [-100.0, -100.0], algo="random", env="Acrobot-v1")
    table = group_results([*pole, *bot], "group", baselines=[pole_base, bot_base])
    summary = multi_env_summary(table, parse_references(["CartPole-v1=500"]))
    ppo = summary.rows[0]
    want_pole = [(v - 20) / (500 - 20) for v in (110, 120, 130, 140)]  # by the reference
    want_bot = [(v + 100) / 100 for v in (-60, -50, -40)]  # by |baseline| (no reference)
    assert ppo.method == "PPO" and ppo.scores["CartPole-v1"] == pytest.approx(want_pole)
    assert ppo.scores["Acrobot-v1"] == pytest.approx(want_bot)
    assert ppo.iqm == pytest.approx(sps.trim_mean(want_pole + want_bot, 0.25))
    assert stratified_iqm([want_pole, want_bot])[1] == ppo.iqm_ci95 and ppo.iqm_ci95[0] <= ppo.iqm <= ppo.iqm_ci95[1]
    tau = summary.taus[10]
    assert ppo.profile[10] == pytest.approx((np.mean(np.array(want_pole) > tau) + np.mean(np.array(want_bot) > tau)) / 2)
    assert performance_profile([want_pole], [0.0]) == [1.0]
    svg = ET.fromstring(profile_svg(summary))
    paths = svg.findall(".//{http://www.w3.org/2000/svg}g[@id='profiles']/{http://www.w3.org/2000/svg}path")
    assert len(paths) == 1 and paths[0].find("{http://www.w3.org/2000/svg}title").text == "PPO"
    md = export_table(table, "md", summary=summary)
    assert "## Across envs" in md and "reference 500.00" in md and "|baseline|" in md
    with pytest.raises(ValueError, match="ENV=SCORE"):
        parse_references(["CartPole-v1:500"])
    assert iqm([1.0, 2.0, 3.0, 100.0]) == 2.5


def test_export_profile_and_a_bad_reference_from_the_command_line(night, tmp_path, capsys):
    root, _ = night
    code, _, err = cli(capsys, "export", "--runs-dir", str(root), "--all", "--reference", "CartPole-v1=500")
    assert code == 2 and "--group-by" in err
    code, _, err = cli(capsys, "export", "--runs-dir", str(root), "--all", "--group-by", "config", "--reference", "500")
    assert code == 2 and "ENV=SCORE" in err
    code, _, err = cli(capsys, "export", "--runs-dir", str(root), "--all", "--group-by", "config", "--profile",
                       str(tmp_path / "p.svg"))
    assert code == 2 and "one env" in err and not (tmp_path / "p.svg").exists()


def test_the_morning_report_has_a_section_of_seed_groups(night):
    root, runs = night
    report = morning_report(RunStore(root), 0.0, baselines=[runs["poor"][0]])
    assert report.groups is not None and [r.group for r in report.groups.rows] == ["poor", "good", "close"]
    text = to_report_markdown(report)
    assert "## Seed groups" in text and "| good |" in text and "Welch" in text


def test_export_group_by_picks_the_baseline_the_report_picks_and_a_one_run_group_has_no_test(tmp_path, capsys):
    """Issue 42: ``export --group-by group`` compared with no baseline where ``report`` picked the random run, yet its
    footer described the tests against one; and a group of one run showed 'no test' beside P(improvement) 1.00."""
    seeds_run(tmp_path, "good", GOOD)
    make_result_run(tmp_path, "solo", [120.0] * 10)  # launched alone: a group of one run
    older = make_result_run(tmp_path, "rand-old", [5.0] * 10, algo="random", started_at=1e9)
    rand = make_result_run(tmp_path, "rand", [9.0, 11.0] * 5, algo="random")  # the newest finished random run
    report = morning_report(RunStore(tmp_path), 0.0)
    assert report.baselines == {"CartPole-v1": rand.name} and older.name not in report.baselines.values()
    code, stdout, err = cli(capsys, "export", "--runs-dir", str(tmp_path), "--all", "--group-by", "group", "--format",
                            "json")
    assert code == 0, err
    out = json.loads(stdout)
    assert out["protocol"]["baselines"] == report.groups.protocol["baselines"] == {"CartPole-v1": "rand"}
    assert f"compared with {rand.name}" in err  # which run it picked, since it was not named
    groups = {g["group"]: g for g in out["groups"]}
    assert groups["good"]["vs_baseline"]["p_value"] < 0.05 and groups["good"]["vs_baseline"]["prob_improvement"]["value"] == 1.0
    alone = groups["solo"]["vs_baseline"]
    assert alone["test"] == "no test: the group has one run" and alone["delta"] == pytest.approx(110.0)
    assert alone["prob_improvement"] == {"value": None, "ci95": None} and alone["p_value"] is None
    code, md, err = cli(capsys, "export", "--runs-dir", str(tmp_path), "--all", "--group-by", "group")
    [line] = [line for line in md.splitlines() if line.startswith("| solo |")]
    assert "no test: the group has one run" in line and "1.00" not in line, line  # no statistic beside "no test"
    assert "Welch" in md  # the tests made are described

    # no random or constant run of the env: no comparison, and a footer that describes none
    shutil.rmtree(rand)
    shutil.rmtree(older)
    code, md, err = cli(capsys, "export", "--runs-dir", str(tmp_path), "--all", "--group-by", "group")
    assert code == 0, err
    assert "Welch" not in md and "probability of improvement" not in md and "P(improvement)" not in md
    assert "No baseline run of CartPole-v1: its groups are compared with none." in md
