"""The Results tab's morning report: the night's runs drawn from the report's Markdown, saved as xlsx."""

from __future__ import annotations

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
