"""Where Results writes a table or a plot: the save dialog's file types, the suffix a typed name is given, and the
folder and file type remembered for next time."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from app.settings import get_setting, set_setting

TABLE_FILTERS = {"Markdown table (*.md)": ".md", "CSV, Excel-friendly (*.csv)": ".csv", "Excel workbook (*.xlsx)": ".xlsx",
                 "LaTeX booktabs table (*.tex)": ".tex", "HTML table (*.html)": ".html"}
PLOT_FILTERS = {"PNG image (*.png)": ".png", "SVG vector image (*.svg)": ".svg"}


def with_suffix(path: str, chosen_filter: str, filters: dict[str, str], known: set[str] | None = None) -> Path:
    """The chosen path, given the suffix of the chosen file type when the user typed no known one."""
    p = Path(path)
    if p.suffix.lower() in (known or set(filters.values())):
        return p
    return p.with_name(p.name + filters.get(chosen_filter, next(iter(filters.values()))))


def ask_save_path(parent: QWidget, title: str, filters: dict[str, str], setting: str, stem: str,
                  known: set[str] | None = None, start: Path | None = None) -> Path | None:
    """A file name from the save dialog, starting in ``start`` (else the folder used last time);
    the folder and file type are remembered for next time."""
    folder = str(start) if start is not None else get_setting(setting, str(Path.home()))
    last = get_setting(setting + "_filter", next(iter(filters)))
    last = last if last in filters else next(iter(filters))
    path, chosen = QFileDialog.getSaveFileName(parent, title, str(Path(folder) / (stem + filters[last])),
                                               ";;".join(filters), last)
    if not path:
        return None
    out = with_suffix(path, chosen, filters, known)
    set_setting(setting, str(out.parent))
    set_setting(setting + "_filter", chosen)
    return out
