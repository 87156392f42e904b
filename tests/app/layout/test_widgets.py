"""The shared widgets that keep words whole: a message list as tall as its wrapped lines at any width; and those that
keep a name (a user's, a machine's, an install's) from setting the window's width: a combo of names, a wrapped
label with a path in it."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.widgets.fit_list import FitList
from app.widgets.name_combo import NameCombo
from app.widgets.wrap_label import wrap_long_words

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


ENV = "my_company.envs.warehouse_robots:WarehouseRobotsEnvironment"  # a custom env's entry point


def test_a_name_combo_is_as_wide_as_it_asks_whatever_it_holds_and_elides_a_long_name(qtbot):
    combo = NameCombo(10)
    qtbot.addWidget(combo)
    combo.setToolTip("Only the runs of this env")
    combo.addItem("all")
    short = combo.sizeHint().width(), combo.minimumSizeHint().width()
    combo.addItem(ENV)
    assert (combo.sizeHint().width(), combo.minimumSizeHint().width()) == short  # the long item asks for nothing
    assert short[0] < combo.fontMetrics().horizontalAdvance(ENV)
    combo.resize(combo.sizeHint())
    combo.show()
    qtbot.waitExposed(combo)
    assert combo.toolTip() == "Only the runs of this env"
    combo.setCurrentIndex(1)  # chosen, the long name is shortened in its middle and whole in the tooltip
    assert combo.is_elided() and combo.toolTip() == f"{ENV}\nOnly the runs of this env"
    assert combo.currentText() == ENV
    combo.resize(combo.fontMetrics().horizontalAdvance(ENV) + 60, combo.height())  # room enough: whole, no tip
    qtbot.waitUntil(lambda: not combo.is_elided())
    assert combo.toolTip() == "Only the runs of this env"


def test_a_path_in_a_wrapped_label_does_not_set_its_columns_width(qtbot):
    page = QWidget()
    qtbot.addWidget(page)
    path = r"C:\Users\someone\experiments\warehouse_robots\results_2024_11_26.csv"  # no place Qt would wrap
    label = wrap_long_words(QLabel(f"Wrote the table to {path}"))
    QVBoxLayout(page).addWidget(label)
    assert label.wordWrap()
    asked = label.minimumSizeHint().width()  # what QLabel asks for the path: nearly all of it
    assert asked > 0.9 * label.fontMetrics().horizontalAdvance(path)
    assert page.minimumSizeHint().width() < asked / 2  # what its column needs
