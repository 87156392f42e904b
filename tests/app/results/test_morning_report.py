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
