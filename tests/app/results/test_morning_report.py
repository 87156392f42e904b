"""The Results tab's morning report: the night's runs drawn from the report's Markdown, saved as xlsx."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.results.panel import ResultsPanel
from tests.core.results.test_report import night


def test_the_morning_report_dialog_shows_the_night_and_saves_it(qtbot, runs_dir, tmp_path):

    _now, base, agent, failed, _queue = night(runs_dir)
    panel = ResultsPanel(runs_dir)
    qtbot.addWidget(panel)
    try:
        check_dialog(qtbot, panel, tmp_path)
    finally:
        panel.close_loader()


def check_dialog(qtbot, panel, tmp_path):
    from openpyxl import load_workbook

    dialog = panel.show_morning_report()
    dialog.since_edit.setText("2000-01-01 00:00")
    dialog.refresh()
    qtbot.waitUntil(lambda: dialog.report is not None and len(dialog.report.rows) == 4, timeout=20_000)
    text = dialog.view.toPlainText()
    assert "Runs since 2000-01-01 00:00" in text and "co2_kg vs baseline" in text and "ValueError: bad action" in text
    path = dialog.save_to(tmp_path / "night.xlsx", "xlsx")
    assert path is not None and "Results" in load_workbook(path).sheetnames
    dialog.since_edit.setText("tonight")
    dialog.refresh()
    assert "HH:MM" in dialog.status.text()


def test_the_dialog_takes_a_baseline_per_env(qtbot, runs_dir):
    from app.results.morning import MorningReportDialog
    from tests.core.results.test_report import two_envs

    _now, runs = two_envs(runs_dir)
    dialog = MorningReportDialog(runs_dir)
    qtbot.addWidget(dialog)
    dialog.since_edit.setText("2000-01-01 00:00")
    dialog.baselines_edit.setText(f"{runs['cart-old'].name}, {runs['pend-base'].name}")
    dialog.refresh()
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=20_000)
    assert dialog.report.baselines == {"CartPole-v1": runs["cart-old"].name, "Pendulum-v1": runs["pend-base"].name,
                                       "Acrobot-v1": None}
    assert "Acrobot-v1: none" in dialog.status.text()
    assert "none: no finished random or constant run of Acrobot-v1" in dialog.view.toPlainText()
    dialog.baselines_edit.setText("nosuchrun")
    dialog.refresh()
    assert dialog.status.text().startswith("Baselines:") and "nosuchrun" in dialog.status.text()
    dialog.report = None
    dialog.baselines_edit.setText(f"{runs['cart-old'].name},{runs['cart-new'].name}")
    dialog.refresh()
    qtbot.waitUntil(lambda: "both baselines of CartPole-v1" in dialog.status.text(), timeout=20_000)


def test_a_report_asked_for_earlier_that_ends_later_is_not_shown_over_the_newer_one(qtbot, runs_dir, monkeypatch):
    import time

    import app.results.morning as morning
    from app.results.morning import MorningReportDialog

    night(runs_dir)
    real = morning.morning_report

    def slow_for_tonight(store, since, *args, **kwargs):  # the first ask (since 18:00) ends after the second
        if since > 946_684_800 + 86400:  # later than 2000-01-02
            time.sleep(1.5)
        return real(store, since, *args, **kwargs)

    monkeypatch.setattr(morning, "morning_report", slow_for_tonight)
    dialog = MorningReportDialog(runs_dir)
    qtbot.addWidget(dialog)
    dialog.refresh()  # since 18:00: three runs, slowly
    dialog.since_edit.setText("2000-01-01 00:00")
    dialog.refresh()  # every run: four, at once
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=20_000)
    qtbot.wait(3000)  # the first ask has ended by now too
    assert len(dialog.report.rows) == 4 and dialog.status.text().startswith("4 runs")


def header_lines(document) -> list[str]:
    """The lines each header cell of the document's first table is laid out in."""
    from PySide6.QtGui import QTextTable

    frame = next(f for f in document.rootFrame().childFrames() if isinstance(f, QTextTable))
    out = []
    for column in range(frame.columns()):
        block = frame.cellAt(0, column).firstCursorPosition().block()
        text, layout = block.text(), block.layout()
        out.append([text[layout.lineAt(i).textStart():][:layout.lineAt(i).textLength()]
                    for i in range(layout.lineCount())])
    return out


def test_the_report_headers_break_only_between_words_and_show_the_reward_against_the_baseline(qtbot, runs_dir):
    from app.results.morning import MorningReportDialog

    _now, _base, agent, _failed, _queue = night(runs_dir)
    dialog = MorningReportDialog(runs_dir)
    qtbot.addWidget(dialog)
    dialog.resize(640, 500)  # narrower than the table: a column is as narrow as Qt may make it
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.since_edit.setText("2000-01-01 00:00")
    dialog.refresh()
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=20_000)
    qtbot.wait(50)
    headers = header_lines(dialog.view.document())
    assert any(len(lines) > 1 for lines in headers)  # some headers do wrap, at their spaces
    for lines in headers:
        for line in lines[:-1]:
            assert line.endswith((" ", "-", "/")), f"header cut mid-word: {lines}"
    assert "Reward vs baseline" in [" ".join(part.strip() for part in lines) for lines in headers]
    assert "Reward vs baseline" in dialog.view.toolTip()


CUDA_OOM = ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.79 GiB total capacity; 5.12 GiB "
            "already allocated; 1.10 GiB free; 5.50 GiB reserved in total by PyTorch)")


def cell_lines(table, row: int, column: int) -> int:
    """The lines a table cell is laid out in (all its blocks)."""
    cell = table.cellAt(row, column)
    block, last = cell.firstCursorPosition().block(), cell.lastCursorPosition().block()
    lines = block.layout().lineCount()
    while block != last:
        block = block.next()
        lines += block.layout().lineCount()
    return lines


def test_the_dialog_fits_the_screen_gives_why_its_room_and_closes(qtbot, runs_dir):
    """Issue 42: 1100x700 on a 1280x720 screen, the Why column so narrow that rows were 5-6 lines tall (a crash's
    message 14), and no Close button."""
    import json

    from app.results.morning import WHY_MIN_CHARS, MorningReportDialog

    _now, _base, _agent, failed, _queue = night(runs_dir)
    status = json.loads((failed / "status.json").read_text())
    (failed / "status.json").write_text(json.dumps({**status, "exit_reason": CUDA_OOM}))
    dialog = MorningReportDialog(runs_dir)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    avail = dialog.screen().availableGeometry()  # the offscreen screen, 800x800: smaller than the dialog asks for
    assert dialog.width() <= avail.width() and dialog.height() + 32 <= avail.height()  # the title bar too
    dialog.since_edit.setText("2000-01-01 00:00")
    dialog.refresh()
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=20_000)
    qtbot.wait(50)
    table = dialog.view.runs_table()
    why = dialog.view.why_column(table)
    names = [table.cellAt(row, 1).firstCursorPosition().block().text() for row in range(table.rows())]
    broke = names.index("broke")
    assert table.cellAt(broke, why).firstCursorPosition().block().text() == CUDA_OOM
    assert cell_lines(table, broke, why) <= 6  # 14 before: its column was ~90 pixels wide
    for row in range(1, table.rows()):  # every other cell of the runs on one line: a row as tall as its Why
        assert [cell_lines(table, row, c) for c in range(table.columns()) if c != why] == [1] * (table.columns() - 1)
    widths = table.format().columnWidthConstraints()
    assert widths[why].rawValue() >= dialog.view.fontMetrics().averageCharWidth() * WHY_MIN_CHARS
    dialog.resize(dialog.width() - 100, dialog.height())  # narrower: Why keeps its least, the table scrolls sideways
    qtbot.waitUntil(lambda: dialog.view.horizontalScrollBar().maximum() > 0, timeout=5000)
    assert cell_lines(table, broke, why) <= 6
    assert dialog.close_button.isVisible() and dialog.close_button.text().replace("&", "") == "Close"
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
