"""Export result rows as CSV, Markdown, XLSX, LaTeX (booktabs) or HTML.

CSV and XLSX are data: typed numbers, empty cells where a run has no number.
Markdown, LaTeX and HTML are for reading: numbers rounded per column, deltas signed
(``+12.30`` / ``+4.5 %``), and runs that did not finish marked with a dagger explained in a legend
under the table. The State column is in every format.

CSV files are written as UTF-8 *with* a byte-order mark: Excel on Windows (our users' platform)
reads a BOM-less CSV in the local ANSI code page and garbles the Δ and ° of the headers and any
non-ASCII run name; Python (``encoding="utf-8-sig"``), pandas and LibreOffice all accept the BOM.
Text returned for stdout has no BOM (it would end up in pipes). CSV floats are measured figures
rounded to ``CSV_DIGITS`` significant digits (``7.07018``, not ``7.070183873139369``: a timer or a
memory reading is not that precise, and a reader's eye slides over 16 digits); ``raw=True``
(``rlpanel export --raw``) writes them exact (Python's shortest round-trip repr). Settings are
written as configured, never rounded. XLSX cells hold 16 significant digits (openpyxl writes
``%.16g``, one more than Excel itself computes with) and show the column's rounding.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.results.settings_diff import setting_text
from core.results.table import LEGEND, MARK, Column, ResultRow, columns_for
from core.util.files import write_bytes_atomic, write_failed
from core.util.text import significant

if TYPE_CHECKING:
    from core.results.group_table import GroupTable
    from core.results.multienv import MultiEnvSummary

SUFFIXES = {".md": "md", ".markdown": "md", ".csv": "csv", ".xlsx": "xlsx", ".tex": "tex", ".html": "html", ".htm": "html"}
EMPTY = "–"  # an en dash where a run has no such number (md, tex, html)
CSV_DIGITS = 6  # significant digits of a measured float in CSV unless raw


class ExportError(ValueError):
    pass


class TableRow(Protocol):
    """What a writer reads of a row: a run's (``ResultRow``) or a group's (``core.results.group_table.GroupRow``)."""

    @property
    def marked(self) -> bool: ...

    @property
    def is_baseline(self) -> bool: ...

    def value(self, key: str) -> Any: ...


def _columns(rows: Sequence[TableRow], cols: list[Column] | None) -> list[Column]:
    """The columns given, else the results table's for rows of runs."""
    return cols if cols is not None else columns_for([r for r in rows if isinstance(r, ResultRow)])


def format_for(fmt: str | None, path: Path | str | None) -> str:
    """The format asked for, or the one the file's suffix names."""
    if fmt:
        fmt = fmt.lower().lstrip(".")
        fmt = {"markdown": "md", "latex": "tex", "htm": "html", "excel": "xlsx"}.get(fmt, fmt)
        if fmt not in FORMATS:
            raise ExportError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    if path is not None and Path(path).suffix.lower() in SUFFIXES:
        return SUFFIXES[Path(path).suffix.lower()]
    raise ExportError(f"no format given and {str(path)!r} has no known suffix; use one of {', '.join('.' + f for f in FORMATS)}")


def export(rows: list[ResultRow], format: str | None = None, path: Path | str | None = None,  # noqa: A002
           raw: bool = False) -> str | bytes:
    """The table of ``rows`` in ``format`` (or the format of ``path``'s suffix); written to
    ``path`` when given. Returns the text (bytes for xlsx). ``raw``: CSV floats at full precision."""
    fmt = format_for(format, path)
    content = to_csv(rows, raw=raw) if fmt == "csv" else WRITERS[fmt](rows)
    if path is not None:
        data = content if isinstance(content, bytes) else (("\ufeff" if fmt == "csv" else "") + content).encode("utf-8")
        _write_bytes(Path(path), data)
    return content


def export_table(table: GroupTable, format: str | None = None, path: Path | str | None = None,  # noqa: A002
                 raw: bool = False, summary: MultiEnvSummary | None = None) -> str | bytes:
    """A table of groups (its rows, columns and protocol footer) in ``format``, like ``export``; ``summary``: the
    summary across envs, a second table under it (a second sheet in xlsx)."""
    fmt = format_for(format, path)
    if fmt == "csv":
        text = to_csv(table.rows, raw=raw, cols=table.columns, notes=table.notes)
        if summary is not None:
            text += "\n" + to_csv(summary.rows, raw=raw, cols=summary.columns, notes=summary.notes)
        content: str | bytes = text
    elif fmt == "xlsx":
        sheets = None if summary is None else {"Across envs": [[c.title for c in summary.columns]] + [
            [r.value(c.key) for c in summary.columns] for r in summary.rows] + [[]] + [[line] for line in summary.notes]}
        content = to_xlsx(table.rows, table.columns, table.notes, sheets=sheets)
    else:
        content = str(WRITERS[fmt](table.rows, table.reading, table.notes))
        if summary is not None:
            heading = {"md": "\n## Across envs\n\n", "html": "<h2>Across envs</h2>\n", "tex": "\n% Across envs\n"}[fmt]
            content += heading + str(WRITERS[fmt](summary.rows, summary.columns, summary.notes))
    if path is not None:
        data = content if isinstance(content, bytes) else (("\ufeff" if fmt == "csv" else "") + content).encode("utf-8")
        _write_bytes(Path(path), data)
    return content


def _write_bytes(path: Path, data: bytes) -> None:
    """The table written whole (a temp file in its folder, fsync, rename) or ``WriteFailed`` naming ``path``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data)
    except OSError as exc:
        raise write_failed(path, exc) from None


# --- rounded text -----------------------------------------------------------------------------

def display(col: Column, row: TableRow) -> str:
    """A cell as a reader sees it: rounded, signed deltas, the mark on unfinished runs."""
    value = row.value(col.key)
    if col.key == "state":
        return f"{value} {MARK}" if row.marked else str(value)
    if col.kind in ("delta", "pct") and row.is_baseline:
        return "baseline"
    return format_value(col, value)


def format_value(col: Column, value: Any) -> str:
    if value is None or value == "":
        return EMPTY
    if isinstance(value, bool):  # stored_eval_deterministic
        return "yes" if value else "no"
    if col.kind == "text":
        return str(value)
    if col.kind == "setting":
        return setting_text(value)
    if col.kind == "int":
        return f"{int(value):,}"
    if col.kind == "float":
        return f"{value:,.{col.digits}f}"
    if col.kind == "delta":
        return f"{value:+,.{col.digits}f}"
    if col.kind == "pct":
        return f"{value:+,.{col.digits}f} %"
    return str(value)


def _notes(rows: Sequence[TableRow], notes: list[str] | None) -> list[str]:
    """The lines under a table: those given (a group table's protocol), else the legend when a run is marked."""
    if notes is not None:
        return notes
    return [LEGEND] if any(r.marked for r in rows) else []


def is_numeric(col: Column) -> bool:
    return col.kind not in ("text", "setting")


# --- Markdown -----------------------------------------------------------------------------------

def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(rows: Sequence[TableRow], cols: list[Column] | None = None, notes: list[str] | None = None) -> str:
    cols = _columns(rows, cols)
    lines = ["| " + " | ".join(_md(c.title) for c in cols) + " |",
             "|" + "|".join("---:" if is_numeric(c) else ":---" for c in cols) + "|"]
    lines += ["| " + " | ".join(_md(display(c, r)) for c in cols) + " |" for r in rows]
    below = _notes(rows, notes)
    return "\n".join(lines) + ("\n\n" + "\n\n".join(below) + "\n" if below else "\n")


# --- CSV ----------------------------------------------------------------------------------------

def csv_value(col: Column, row: TableRow, raw: bool = True) -> Any:
    """A cell as data: ``raw`` floats print as repr (they read back exactly), else measured floats are rounded
    to ``CSV_DIGITS`` significant digits; settings stay as configured."""
    value = row.value(col.key)
    if col.kind == "setting" and value is not None and not isinstance(value, int | float | str):
        return setting_text(value)  # a list or null as the config file writes it
    if not raw and col.kind != "setting" and isinstance(value, float):
        return significant(value, CSV_DIGITS)
    return "" if value is None else value


def to_csv(rows: Sequence[TableRow], raw: bool = False, cols: list[Column] | None = None,
           notes: list[str] | None = None) -> str:
    """The table, then (a group table's) protocol footer under an empty line, one line in the first cell each."""
    cols = _columns(rows, cols)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow([c.title for c in cols])
    for r in rows:
        writer.writerow([csv_value(c, r, raw) for c in cols])
    if notes:
        writer.writerow([])
        writer.writerows([line] for line in notes)
    return buf.getvalue()


# --- LaTeX --------------------------------------------------------------------------------------

_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
        "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "Δ": r"$\Delta$", "°": r"\textdegree{}",
        MARK: r"\textsuperscript{\dag}", "–": "--", "±": r"$\pm$", "<": r"\textless{}", ">": r"\textgreater{}",
        "|": r"\textbar{}"}


def tex_escape(text: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in text)


def to_latex(rows: Sequence[TableRow], cols: list[Column] | None = None, notes: list[str] | None = None) -> str:
    cols = _columns(rows, cols)
    spec = "".join("r" if is_numeric(c) else "l" for c in cols)
    lines = ["% needs \\usepackage{booktabs} and \\usepackage{graphicx} (and textcomp for \\textdegree on old TeX",
             "% installations); a table wider than the line is scaled down to it, a narrower one is left as it is",
             r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
             f"\\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(tex_escape(c.title) for c in cols) + r" \\", r"\midrule"]
    lines += [" & ".join(tex_escape(display(c, r)) for c in cols) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}}"]
    for line in _notes(rows, notes):
        lines.append(r"\par\smallskip{\footnotesize " + tex_escape(line) + "}")
    return "\n".join(lines) + "\n"


# --- HTML ---------------------------------------------------------------------------------------

def to_html(rows: Sequence[TableRow], cols: list[Column] | None = None, notes: list[str] | None = None) -> str:
    cols = _columns(rows, cols)
    esc = html.escape
    out = ['<table class="rlpanel-results">', "<thead>", "<tr>" + "".join(
        f'<th style="text-align:{"right" if is_numeric(c) else "left"}">{esc(c.title)}</th>' for c in cols) + "</tr>",
        "</thead>", "<tbody>"]
    for r in rows:
        cls = ' class="marked"' if r.marked else ""
        cells = "".join(f'<td style="text-align:right">{esc(display(c, r))}</td>' if is_numeric(c)
                        else f"<td>{esc(display(c, r))}</td>" for c in cols)
        out.append(f"<tr{cls}>{cells}</tr>")
    out += ["</tbody>", "</table>"]
    out += [f'<p class="legend">{esc(line)}</p>' for line in _notes(rows, notes)]
    return "\n".join(out) + "\n"


# --- XLSX ---------------------------------------------------------------------------------------

def xlsx_number_format(col: Column) -> str | None:
    decimals = "." + "0" * col.digits if col.digits else ""
    return {"int": "#,##0", "float": f"#,##0{decimals}", "delta": f"+#,##0{decimals};-#,##0{decimals};0{decimals}",
            "pct": f'+0{decimals}" %";-0{decimals}" %";0{decimals}" %"'}.get(col.kind)


def to_xlsx(rows: Sequence[TableRow], cols: list[Column] | None = None, notes: list[str] | None = None,
            sheets: dict[str, list[list[Any]]] | None = None) -> bytes:
    """The table in sheet "Results" (a group table's protocol footer under it, after an empty row); ``sheets``: more
    sheets, title -> rows of cells (the morning report's)."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter

    cols = _columns(rows, cols)
    wb = Workbook()
    ws = wb.active
    ws.title = "Results"
    header_font, header_fill = Font(bold=True), PatternFill("solid", fgColor="DDE7F3")
    marked_fill, marked_font = PatternFill("solid", fgColor="FBE3E3"), Font(italic=True)
    ws.append([c.title for c in cols])
    for cell in ws[1]:
        cell.font, cell.fill = header_font, header_fill
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    for r in rows:
        ws.append([csv_value(c, r) if c.kind == "setting" else r.value(c.key) for c in cols])  # None: an empty cell
    for j, col in enumerate(cols, start=1):
        fmt = xlsx_number_format(col)
        width = len(col.title) if is_numeric(col) else max([len(col.title)] + [len(str(r.value(col.key) or "")) for r in rows])
        ws.column_dimensions[get_column_letter(j)].width = min(max(width, 8) + 2, 48)
        for i, r in enumerate(rows, start=2):
            cell = ws.cell(row=i, column=j)
            if fmt:
                cell.number_format = fmt
            if col.key == "state" and r.marked:
                cell.fill, cell.font = marked_fill, marked_font
    ws.freeze_panes = "A2"
    if rows:
        ws.auto_filter.ref = ws.dimensions
    if notes:
        ws.append([])
        for note in notes:
            ws.append([note])
    for title, cells in (sheets or {}).items():
        extra = wb.create_sheet(title)
        for line in cells:
            extra.append(line)
        for cell in extra[1] if cells else ():
            cell.font, cell.fill = header_font, header_fill
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


# a format is its writer here (FORMATS follows) and its suffixes in SUFFIXES
# each takes (rows, columns=None, notes=None): a run's rows get the results table's columns and legend
WRITERS: dict[str, Callable[..., str | bytes]] = {
    "md": to_markdown, "csv": to_csv, "xlsx": to_xlsx, "tex": to_latex, "html": to_html}
FORMATS = tuple(WRITERS)
