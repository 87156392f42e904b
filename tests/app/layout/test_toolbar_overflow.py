"""Nothing a panel's row has no room for is out of reach: the row's » offers it, and the entry does what the control does.

Qt's » leaves out controls added as plain widgets (it showed itself disabled, with nothing in it): at 1280x720 Monitor's
Save plots… and Open in TensorBoard, Results' Save plot… and CO2 box, and Queue's Load into Configure and Replace with
current config could not be reached at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSlider,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.settings import GRID_SETTING, get_setting
from tests.app.configure.helpers import wait_settled
from tests.app.layout.tour import make_runs

MORE = "qt_toolbar_ext_button"  # Qt's » button (by name, so that this test runs against any row)


def through_more(qtbot, bar: QToolBar, act: Callable[[QMenu], Any]) -> Any:
    """Click the row's », run ``act`` on the open menu (a click on an entry closes it; else it is closed after)."""
    more = bar.findChild(QToolButton, MORE)
    assert more is not None and more.isVisible(), f"{bar.objectName()} shows no »"
    assert more.isEnabled(), f"{bar.objectName()}'s » is disabled: it offers nothing"
    menu = more.menu()
    done: dict[str, Any] = {}
    deadline = time.monotonic() + 5

    def inside() -> None:
        if not menu.isVisible():  # the click's press opens it a turn of the event loop later
            if time.monotonic() < deadline:
                QTimer.singleShot(10, inside)
            else:
                done["error"] = AssertionError(f"{bar.objectName()}'s » opened no menu")
            return
        try:
            done["value"] = act(menu)
        except BaseException as error:  # noqa: BLE001 (raised again below, once the menu's own loop has ended)
            done["error"] = error
        finally:
            if menu.isVisible():
                menu.close()

    QTimer.singleShot(0, inside)
    more.click()  # » opens its menu in an event loop of its own, which ends when the menu closes
    qtbot.waitUntil(lambda: bool(done))
    if "error" in done:
        raise done["error"]
    return done["value"]


def click_entry(qtbot, menu: QMenu, entry: QAction) -> None:
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(entry).center())


def entry_for(menu: QMenu, text: str) -> QAction:
    found = [a for a in menu.actions() if a.text() == text]
    assert found, f"» offers no {text!r}: {[a.text() for a in menu.actions()]}"
    return found[0]


def row_items_out_of_room(bar: QToolBar) -> list[QAction]:
    """The row's items Qt hid for want of room (not the stretch before the right-hand group: it holds nothing)."""
    hidden = []
    for action in bar.actions():
        widget = bar.widgetForAction(action)
        if action.isSeparator() or widget is None or widget.isVisibleTo(bar):
            continue
        if type(widget) is QWidget and widget.layout() is None:
            continue  # the stretch
        hidden.append(action)
    return hidden


def assert_every_hidden_item_offered(qtbot, bar: QToolBar) -> list[QAction]:
    hidden = row_items_out_of_room(bar)
    if not hidden:
        return []
    offered = through_more(qtbot, bar, lambda menu: list(menu.actions()))
    for action in hidden:
        widget = bar.widgetForAction(action)
        assert action in offered, f"{bar.objectName()}: {widget} has no room and » does not offer it"
        assert action.isEnabled() == widget.isEnabledTo(bar)  # offered as usable exactly when the control is
    return hidden


# --- the window at 1280x720 ------------------------------------------------------------------------


@pytest.fixture
def laptop(make_window, qtbot, runs_dir):
    """The window at 1280x720 logical (1920x1080 at 150 %) less its title bar, a run followed, as the night's user has it."""
    live = make_runs(runs_dir)
    window = make_window()
    window.resize(1280, 688)
    window.configure.set_compact(True)
    wait_settled(qtbot, window.configure)
    window.open_run(live)
    return window, live


def show_tab(qtbot, window, name: str) -> QWidget:
    window.tabs.setCurrentIndex(window.lazy_tabs.names().index(name))
    panel = window.lazy_tabs.get(name)
    qtbot.waitUntil(lambda: panel.isVisible() and any(bar.findChild(QToolButton, MORE).isVisible()
                                                      for bar in panel.findChildren(QToolBar)))
    return panel


def bar_of(panel: QWidget, control: QWidget) -> QToolBar:
    return next(bar for bar in panel.findChildren(QToolBar) if bar.isAncestorOf(control))


def rows_offer_every_hidden_item(qtbot, panel: QWidget, controls: list[QWidget]) -> None:
    hidden_rows = {}
    for bar in panel.findChildren(QToolBar):
        for action in assert_every_hidden_item_offered(qtbot, bar):
            hidden_rows[bar.widgetForAction(action)] = bar
    for control in controls:  # the controls are among them (the test would prove nothing if they fitted)
        assert any(row is control or row.isAncestorOf(control) for row in hidden_rows), f"{control} has room at 1280 px"


def test_monitor_save_plots_and_tensorboard_are_offered_behind_more_and_work(laptop, qtbot, monkeypatch):
    window, live = laptop
    monitor = show_tab(qtbot, window, "Monitor")
    rows_offer_every_hidden_item(qtbot, monitor, [monitor.save_button, monitor.tensorboard_button])
    bar = bar_of(monitor, monitor.save_button)
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args: (asked.append(args[2]), ("", ""))[1])
    with qtbot.waitSignal(monitor.save_button.clicked):
        through_more(qtbot, bar, lambda menu: click_entry(qtbot, menu, entry_for(menu, "Save plots…")))
    assert asked == [str(live / "monitor.png")]  # the save dialog, in the followed run's folder
    with qtbot.waitSignal(window.tensorboard.message, check_params_cb=lambda text: live.name in text, timeout=10_000):
        through_more(qtbot, bar, lambda menu: click_entry(qtbot, menu, entry_for(menu, "Open in TensorBoard")))


def test_results_save_plot_and_the_co2_box_are_offered_behind_more_and_work(laptop, qtbot, monkeypatch, tmp_path):
    window, _live = laptop
    results = show_tab(qtbot, window, "Results")
    # on a laptop Configure folds away while Results is shown, and then the row has room: its » matters once the
    # user shows Configure beside it (the corner's Show Configure)
    qtbot.mouseClick(window.configure_fold.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.configure.isVisible(), timeout=5_000)
    results.set_checked(results.shown_ids())  # runs ticked: the baseline box takes its room
    qtbot.waitUntil(lambda: results.model.rowCount() > 0, timeout=10_000)
    rows_offer_every_hidden_item(qtbot, results, [results.save_plot_button, results.grid_spin])
    bar = bar_of(results, results.grid_spin)

    def type_350(menu: QMenu) -> None:
        twins = menu.findChildren(QDoubleSpinBox)
        assert len(twins) == 1 and twins[0].isVisible() and twins[0].isEnabled()
        assert twins[0].suffix() == " g/kWh" and twins[0].text() == "off"  # as the box in the row shows it
        twins[0].selectAll()
        qtbot.keyClicks(twins[0], "350")

    through_more(qtbot, bar, type_350)
    assert results.grid_spin.value() == 350 and get_setting(GRID_SETTING, 0.0) == 350
    out = tmp_path / "curves.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args: (str(out), "PNG image (*.png)"))
    with qtbot.waitSignal(results.save_plot_button.clicked):
        through_more(qtbot, bar, lambda menu: click_entry(qtbot, menu, entry_for(menu, "Save plot…")))
    assert out.stat().st_size > 1000


def test_queue_load_into_configure_and_replace_are_offered_behind_more_and_work(laptop, qtbot, monkeypatch):
    window, _live = laptop
    queue = show_tab(qtbot, window, "Queue")
    editor = queue.editor
    monkeypatch.setattr(QInputDialog, "getText", lambda *args, **kwargs: (kwargs["text"], True))  # OK on the name offered
    editor.add_config_button.click()
    qtbot.waitUntil(lambda: editor.selected_row() == 0)
    rows_offer_every_hidden_item(qtbot, queue, [editor.edit_button, editor.replace_button])
    bar = bar_of(queue, editor.edit_button)
    with qtbot.waitSignal(editor.edit_button.clicked):
        through_more(qtbot, bar, lambda menu: click_entry(qtbot, menu, entry_for(menu, "Load into Configure")))
    assert "is in the Configure tab" in editor.message.text()
    with qtbot.waitSignal(editor.changed):
        through_more(qtbot, bar, lambda menu: click_entry(qtbot, menu, entry_for(menu, "Replace with current config")))
    assert editor.message.text().startswith("Replaced ")


# --- each kind of control's menu form -----------------------------------------------------------


def narrow_row(qtbot, items: list) -> tuple[QWidget, QToolBar]:
    from app.widgets.toolbar import panel_toolbar

    page = QWidget()
    qtbot.addWidget(page)
    bar = panel_toolbar("row", items)
    QVBoxLayout(page).addWidget(bar)
    page.resize(140, 60)  # room for the first button and »
    page.show()
    qtbot.waitExposed(page)
    qtbot.waitUntil(lambda: bar.findChild(QToolButton, MORE).isVisible())
    return page, bar


def test_every_kind_of_control_has_a_working_form_behind_more(qtbot):
    from app.widgets.toolbar import Labelled

    first, save, pause, stop_too = QPushButton("First"), QPushButton("Save plots…"), QPushButton("Pause"), QCheckBox("stop too")
    pause.setCheckable(True)
    pause.toggled.connect(lambda on: pause.setText("Resume plots" if on else "Pause"))  # as the Monitor's does
    charts = QToolButton()
    charts.setText("Charts")
    charts.setMenu(QMenu(charts))
    on_failure = QComboBox()
    on_failure.addItems(["continue", "stop"])
    grid = QDoubleSpinBox()
    grid.setRange(0, 2000)
    grid.setSuffix(" g/kWh")
    smoothing, readout = QSlider(Qt.Orientation.Horizontal), QLabel("off")
    smoothing.setRange(0, 999)
    smoothing.valueChanged.connect(lambda v: readout.setText(f"{v / 1000:g}" if v else "off"))  # the panel's own handler
    save.setEnabled(False)
    page, bar = narrow_row(qtbot, [first, save, pause, stop_too, charts, Labelled("On failure", on_failure),
                                   Labelled("CO2", grid), Labelled("Smoothing", smoothing, readout=readout)])
    assert not save.isVisibleTo(bar) and not smoothing.isVisibleTo(bar)
    texts = through_more(qtbot, bar, lambda menu: [(a.text(), a.isEnabled()) for a in menu.actions()])
    assert ("Save plots…", False) in texts  # offered, disabled as its button is
    assert ("Pause", True) in texts and ("stop too", True) in texts and ("On failure: continue", True) in texts

    save.setEnabled(True)  # the panel enables the button, never the entry: » shows it enabled when next opened
    with qtbot.waitSignal(save.clicked):
        through_more(qtbot, bar, lambda menu: click_entry(qtbot, menu, entry_for(menu, "Save plots…")))
    with qtbot.waitSignal(pause.toggled):
        through_more(qtbot, bar, lambda menu: click_entry(qtbot, menu, entry_for(menu, "Pause")))
    assert pause.isChecked()
    assert through_more(qtbot, bar, lambda menu: entry_for(menu, "Resume plots").isChecked())  # the button's new text, checked
    through_more(qtbot, bar, lambda menu: click_entry(qtbot, menu, entry_for(menu, "stop too")))
    assert stop_too.isChecked()
    assert through_more(qtbot, bar, lambda menu: entry_for(menu, "Charts").menu()) is charts.menu()  # its own menu, as a submenu

    def pick_stop(menu: QMenu) -> None:
        choices = entry_for(menu, "On failure: continue").menu()
        choices.popup(QPoint(0, 0))
        assert [a.text() for a in choices.actions()] == ["continue", "stop"] and choices.actions()[0].isChecked()
        click_entry(qtbot, choices, choices.actions()[1])

    through_more(qtbot, bar, pick_stop)
    assert on_failure.currentText() == "stop"

    def twins(menu: QMenu) -> None:
        box = menu.findChildren(QDoubleSpinBox)[0]
        box.setValue(350)
        grid.setValue(400)  # and the other way
        assert box.value() == 400 and box.suffix() == " g/kWh"
        slider = menu.findChildren(QSlider)[0]
        slider.setValue(900)
        assert smoothing.value() == 900
        assert [label.text() for label in menu.findChildren(QLabel)] == ["CO2", "Smoothing", "0.9"]  # captions, readout

    through_more(qtbot, bar, twins)
    assert grid.value() == 400 and readout.text() == "0.9"

    page.setEnabled(False)  # a panel disabled as a whole, then enabled: its controls come back usable
    through_more_refresh = bar.findChild(QToolButton, MORE).menu().aboutToShow
    through_more_refresh.emit()
    page.setEnabled(True)
    assert save.isEnabled() and pause.isEnabled()


def test_a_control_with_no_menu_form_is_refused():
    from app.widgets.toolbar import panel_toolbar

    with pytest.raises(TypeError, match="QLineEdit has no menu form"):
        panel_toolbar("row", [QLineEdit()])
