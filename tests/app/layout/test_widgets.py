"""The shared widgets that keep words whole: a message list as tall as its wrapped lines at any width."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.widgets.fit_list import FitList

MESSAGE = ("algo: SAC needs a continuous (Box) action space; CartPole-v1 has a discrete one: use PPO, A2C, DQN, "
           "TRPO, ARS, RecurrentPPO or MaskablePPO")


def test_a_fit_list_grows_with_its_wrapped_lines_when_its_column_narrows(qtbot):
    page = QWidget()
    qtbot.addWidget(page)
    errors = FitList(max_height=400)
    QVBoxLayout(page).addWidget(errors)
    errors.addItem(MESSAGE)
    errors.fit_height()
    page.resize(300, 500)
    page.show()
    qtbot.waitExposed(page)
    wide = errors.height()
    assert wide >= errors.visualItemRect(errors.item(0)).height() > 2 * errors.fontMetrics().height()  # wrapped, all shown
    page.resize(180, 500)
    qtbot.waitUntil(lambda: errors.height() > wide)
    assert errors.height() >= errors.visualItemRect(errors.item(0)).height()
