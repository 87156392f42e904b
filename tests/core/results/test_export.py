"""Every export format read back with a real reader; ``rlpanel export`` in a subprocess."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import time
from html.parser import HTMLParser

import openpyxl
import pytest

from core.results.export import CSV_DIGITS, EMPTY, ExportError, display, export, format_for
from core.results.settings_diff import setting_text
from core.results.table import MARK, columns_for, results
from core.util.text import significant
from tests.conftest import REPO
from tests.results_helpers import make_result_run

ODD_NAME = "a|b & <c>_50%"


@pytest.fixture
def rows(runs_dir):
    base = make_result_run(runs_dir, "base", [9.5, 10.25, 11.0], algo="random")
    good = make_result_run(runs_dir, ODD_NAME, [float(v) / 3 for v in range(120)], preset="fast",
                           evals=[(30.123456, 1.987654)], gpu_peak_bytes=1536 * 2**20 + 12345)
    boom = make_result_run(runs_dir, "boom", [12.0, 14.0], state="crashed")
    return results([good, boom], baseline=base)


def _num(text: str) -> float:
    return float(text.replace(",", "").replace("%", "").strip())


def assert_rounded(cells: list[list[str]], rows) -> None:
    """Cells shown for reading equal the row values rounded to each column's digits."""
    cols = columns_for(rows)
    assert len(cells) == len(rows)
    for row, line in zip(rows, cells, strict=True):
        assert len(line) == len(cols)
        for col, cell in zip(cols, line, strict=True):
            value = row.value(col.key)
            if col.key == "state":
                assert cell == (f"{value} {MARK}" if row.marked else value)
            elif col.kind in ("delta", "pct") and row.is_baseline:
                assert cell == "baseline"
            elif value is None:
                assert cell == EMPTY
            elif col.kind == "text":
                assert cell == value
            elif col.kind == "setting":
                assert cell == setting_text(value)
            else:
                assert _num(cell) == round(value, col.digits), (col.key, cell, value)
                if col.kind in ("delta", "pct"):
                    assert cell[0] in "+-"


def read_csv(path) -> list[list[str]]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return list(csv.reader(fh))


def test_csv_rounds_measured_floats_to_6_significant_digits_with_a_bom_for_excel(rows, tmp_path):
    path = tmp_path / "night.csv"
    export(rows, path=path)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    table = read_csv(path)
    cols = columns_for(rows)
    assert table[0] == [c.title for c in cols] and len(table) == len(rows) + 1
    long_floats = 0
    for row, line in zip(rows, table[1:], strict=True):
        for col, cell in zip(cols, line, strict=True):
            value = row.value(col.key)
            if value is None:
                assert cell == ""
            elif col.kind == "text":
                assert cell == value
            elif isinstance(value, float):
                assert float(cell) == significant(value, CSV_DIGITS) and len(cell.strip("-0.").replace(".", "")) <= 6, cell
                long_floats += len(repr(value)) > 10
            else:
                assert float(cell) == value
    assert long_floats  # the rows hold floats like 12.166666666666666: rounding is what made them short
    raw = tmp_path / "raw.csv"
    export(rows, path=raw, raw=True)
    for row, line in zip(rows, read_csv(raw)[1:], strict=True):  # --raw: every float exactly, as it reads back
        for col, cell in zip(cols, line, strict=True):
            value = row.value(col.key)
            if isinstance(value, float):
                assert float(cell) == value
    assert table[2][0:2] == [rows[1].run_id, ODD_NAME] and table[3][5] == "crashed"
    assert not export(rows, "csv").startswith("\ufeff")  # text for stdout has no BOM


def test_xlsx_has_typed_full_precision_cells_and_a_styled_frozen_header(rows, tmp_path):
    path = tmp_path / "night.xlsx"
    export(rows, path=path)
    ws = openpyxl.load_workbook(path).active
    cols = columns_for(rows)
    assert [c.value for c in ws[1]] == [c.title for c in cols]
    assert all(c.font.bold and c.fill.fgColor.rgb.endswith("DDE7F3") for c in ws[1])
    assert ws.freeze_panes == "A2" and ws.max_row == len(rows) + 1
    for i, row in enumerate(rows, start=2):
        for j, col in enumerate(cols, start=1):
            cell, value = ws.cell(row=i, column=j), row.value(col.key)
            if isinstance(value, float):  # openpyxl writes 16 significant digits (%.16g); Excel keeps 15
                assert cell.value == float(f"{value:.16g}"), (col.key, cell.value, value)
            else:
                assert cell.value == value, (col.key, cell.value, value)
            if col.kind != "text" and value is not None:
                assert cell.data_type == "n" and cell.number_format != "General"
    reward = cols.index(next(c for c in cols if c.key == "final_mean_reward")) + 1
    assert ws.cell(row=3, column=reward).number_format == "#,##0.00"
    assert ws.column_dimensions["A"].width >= len(rows[0].run_id)
    state = [c.key for c in cols].index("state") + 1
    assert ws.cell(row=4, column=state).value == "crashed" and ws.cell(row=4, column=state).font.italic


class TableParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.head, self.body, self.row_classes, self.cell, self.section, self.text = [], [], [], None, None, []

    def handle_starttag(self, tag, attrs):
        if tag in ("thead", "tbody"):
            self.section = tag
        elif tag == "tr" and self.section == "tbody":
            self.body.append([])
            self.row_classes.append(dict(attrs).get("class"))
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            (self.head if tag == "th" else self.body[-1]).append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        elif data.strip():
            self.text.append(data.strip())


def test_html_table_reads_back_rounded_and_escaped(rows):
    text = export(rows, "html")
    parser = TableParser()
    parser.feed(text)
    cols = columns_for(rows)
    assert parser.head == [c.title for c in cols]
    assert_rounded(parser.body, rows)
    assert parser.row_classes == [None, None, "marked"]
    assert "&lt;c&gt;" in text and "<c>" not in text
    assert any(MARK in t and "did not finish" in t for t in parser.text)  # the legend


def split_md(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def test_markdown_pipe_table_has_one_line_per_run_and_every_column(rows):
    text = export(rows, "md")
    table = [line for line in text.splitlines() if line.startswith("|")]
    cols = columns_for(rows)
    assert len(table) == len(rows) + 2
    assert split_md(table[0]) == [c.title for c in cols]
    assert all(set(c) <= set(":-") for c in split_md(table[1]))
    assert_rounded([split_md(line) for line in table[2:]], rows)
    assert f"{MARK} the run did not finish" in text


def test_latex_booktabs_rows_columns_and_escaping(rows):
    text = export(rows, "tex")
    lines = text.splitlines()
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    body = [line for line in lines if line.endswith(r"\\")]
    cols = columns_for(rows)
    assert len(body) == len(rows) + 1
    assert all(len(re.findall(r"(?<!\\)&", line)) == len(cols) - 1 for line in body)
    assert r"a\textbar{}b \& \textless{}c\textgreater{}\_50\%" in body[2]
    assert r"\_50\%" in body[2] and r"$\Delta$" in body[0] and r"\textsuperscript{\dag}" in body[3]
    unescape = {r"\%": "%", "--": "–", r"\textsuperscript{\dag}": MARK}
    cells = []
    for line in body[1:]:
        line = line[: -len(r"\\")]
        for k, v in unescape.items():
            line = line.replace(k, v)
        cells.append([c.strip() for c in re.split(r"(?<!\\)&", line)])
    for row, line in zip(rows, cells, strict=True):  # the numeric cells, rounded
        numeric = [(c, cell) for c, cell in zip(cols, line, strict=True) if c.kind != "text"]
        assert [cell for _, cell in numeric] == [display(c, row) for c, _ in numeric]


def test_format_from_suffix_and_unknown_formats():
    assert [format_for(None, f"x{s}") for s in (".md", ".CSV", ".xlsx", ".tex", ".htm")] == ["md", "csv", "xlsx", "tex", "html"]
    assert format_for("latex", None) == "tex"
    with pytest.raises(ExportError, match="choose one of"):
        format_for("pdf", None)
    with pytest.raises(ExportError, match="no known suffix"):
        format_for(None, "table.txt")


# --- the command ---------------------------------------------------------------------------------

def rlpanel(*args: str) -> subprocess.CompletedProcess:
    """The ``rlpanel`` console script's entry point (app.entry.main), as a user runs it."""
    return subprocess.run([sys.executable, "-m", "app.entry", *args], capture_output=True, text=True, encoding="utf-8",
                          cwd=REPO, timeout=60)


def test_cli_markdown_to_stdout_with_a_baseline(runs_dir):
    base = make_result_run(runs_dir, "base", [10.0], algo="random")
    run = make_result_run(runs_dir, "sac", [15.0])
    done = rlpanel("export", "--runs-dir", str(runs_dir), "--runs", run.name, "--baseline", base.name, "--format", "md")
    assert done.returncode == 0, done.stderr
    table = [split_md(line) for line in done.stdout.splitlines() if line.startswith("|")]
    assert len(table) == 4 and table[2][0] == base.name and table[3][0] == run.name
    head = table[0]
    cells = dict(zip(head, table[3], strict=True))
    assert (cells["Δ vs baseline"], cells["Δ vs baseline (%)"]) == ("+5.00", "+50.0 %")
    # a random baseline is evaluated by its own episodes; the A2C run has no eval: its training episodes count
    assert cells["Δ compares"] == "training, last 1 vs 1 ep" and cells["± (std. error)"] == "0.00"


def test_cli_xlsx_needs_a_file_and_writes_it_with_all_since(runs_dir, tmp_path):
    make_result_run(runs_dir, "last-week", [1.0], started_at=time.time() - 8 * 86400)
    recent = [make_result_run(runs_dir, f"night-{i}", [float(i)], started_at=time.time() - 600 + i) for i in range(2)]
    since = time.strftime("%Y-%m-%d", time.localtime(time.time() - 86400))
    no_file = rlpanel("export", "--runs-dir", str(runs_dir), "--all", "--format", "xlsx")
    assert no_file.returncode == 2 and "-o" in no_file.stderr and len(no_file.stderr.strip().splitlines()) == 1
    out = tmp_path / "night.xlsx"
    done = rlpanel("export", "--runs-dir", str(runs_dir), "--all", "--since", since, "--format", "xlsx", "-o", str(out))
    assert done.returncode == 0, done.stderr
    ws = openpyxl.load_workbook(out).active
    assert [ws.cell(row=i, column=1).value for i in (2, 3)] == [r.name for r in recent] and ws.max_row == 3
    again = rlpanel("export", "--runs-dir", str(runs_dir), "--all", "-o", str(out))
    assert again.returncode == 2 and "--overwrite" in again.stderr


def test_cli_csv_rounds_floats_and_raw_keeps_them(runs_dir):
    make_result_run(runs_dir, "thirds", [1 / 3, 2 / 3, 1.0])  # a mean reward of 0.6666666666666666
    rounded = rlpanel("export", "--runs-dir", str(runs_dir), "--all", "--format", "csv")
    raw = rlpanel("export", "--runs-dir", str(runs_dir), "--all", "--format", "csv", "--raw")
    assert rounded.returncode == raw.returncode == 0, rounded.stderr + raw.stderr
    [row] = csv.DictReader(rounded.stdout.splitlines())
    [raw_row] = csv.DictReader(raw.stdout.splitlines())
    reward = next(k for k in row if k.startswith("Final mean reward"))
    assert (row[reward], raw_row[reward]) == ("0.666667", "0.6666666666666666")


def test_cli_json_rows_and_a_bad_run_id(runs_dir):
    run = make_result_run(runs_dir, "boom", [3.0], state="crashed")
    done = rlpanel("export", "--runs-dir", str(runs_dir), "--runs", run.name, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data[0]["state"] == "crashed" and data[0]["marked"] is True and data[0]["final_mean_reward"] == 3.0
    bad = rlpanel("export", "--runs-dir", str(runs_dir), "--runs", "no-such-run", "--format", "md")
    assert bad.returncode != 0 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        f"rlpanel export: no run 'no-such-run' in {runs_dir}; list the runs with: rlpanel runs"]


# --- the plot as SVG (written from the data) -------------------------------------------------------

def test_curves_svg_is_valid_escaped_and_thinned():
    import xml.etree.ElementTree as ET

    from core.results.curves import RewardCurve
    from core.results.svg import MAX_POINTS, curves_svg, nice_ticks

    n = 10_000
    big = RewardCurve("r1", "a<&b (r1)", "a<&b", [float(i) for i in range(n)], [i / 10 for i in range(n)],
                      [i % 7 for i in range(n)])
    small = RewardCurve("r2", "r2", None, [0.0, 5.0], [0.0, 1.0], [-3.0, 2.0])
    root = ET.fromstring(curves_svg([big, small], x_mode="time", background="#ffffff", foreground="#303030",
                                    colors=["#3d8ee8", "#e8883d"]))
    ns = "{http://www.w3.org/2000/svg}"
    lines = root.findall(f".//{ns}polyline")
    assert [ln.find(f"{ns}title").text for ln in lines] == ["a<&b (r1)", "r2"]
    assert MAX_POINTS // 2 < len(lines[0].get("points").split()) <= MAX_POINTS + 1
    assert "wall time since start (s)" in {t.text for t in root.iter(f"{ns}text")}
    assert nice_ticks(0, 5000) == [0, 1000, 2000, 3000, 4000, 5000]
    assert nice_ticks(-1234, -80) == [-1250, -1000, -750, -500, -250, 0]
