"""What a laptop screen's window does with its room: the preset list takes the forms' place and folds on a pick,
typing in a form never scrolls it sideways, a flat series gets its own y room, an empty plot shows no ticks."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from app.plots.live_plot import LivePlot
from tests.app.configure.helpers import wait_settled


def laptop_window(make_window, qtbot):
    window = make_window()
    window.resize(1280, 688)
    window.configure.set_compact(True)
    wait_settled(qtbot, window.configure)
    return window


def test_the_open_preset_list_takes_the_forms_place_and_a_pick_folds_it(make_window, qtbot):
    window = laptop_window(make_window, qtbot)
    panel = window.configure
    side_height = panel.side.height()
    panel.presets_toggle.click()
    qtbot.waitUntil(lambda: panel.presets_box.isVisible())
    assert not panel.forms_area.isVisible() and panel.side.isVisible()  # the forms give way, not the Run/Budget/Fit column
    assert panel.side.height() == side_height
    names = [panel.presets_box.list.item(i).text() for i in range(panel.presets_box.list.count())]
    row = next(i for i, name in enumerate(names) if name.startswith("fast"))
    item = panel.presets_box.list.item(row)
    qtbot.mouseClick(panel.presets_box.list.viewport(), Qt.MouseButton.LeftButton,
                     pos=panel.presets_box.list.visualItemRect(item).center())
    qtbot.waitUntil(lambda: not panel.presets_box.isVisible())
    assert panel.forms_area.isVisible() and panel.current_preset() == "fast"
    assert panel.presets_toggle.text() == "Preset: fast"


def test_typing_in_a_field_never_scrolls_the_form_sideways(make_window, qtbot):
    window = laptop_window(make_window, qtbot)
    panel = window.configure
    bar = panel.forms_area.horizontalScrollBar()
    editor = panel.rows["ppo.batch_size"].editor
    panel.forms_area.ensureWidgetVisible(editor)
    editor.setFocus()
    line = editor.lineEdit() if hasattr(editor, "lineEdit") and editor.lineEdit() else editor
    line.selectAll()
    qtbot.keyClicks(line, "1000")
    qtbot.keyClick(line, Qt.Key.Key_Tab)
    QApplication.processEvents()
    assert bar.maximum() == 0 and bar.value() == 0
    label = panel.rows["ppo.batch_size"].label
    assert label.mapTo(panel.forms_area.viewport(), QPoint(0, 0)).x() >= 0  # the labels stay in view


def test_a_flat_series_gets_room_around_its_value_and_an_empty_plot_no_tick_values(qtbot):
    page = QWidget()  # the page is closed at the end; pyqtgraph's widget closed on its own tears down twice
    qtbot.addWidget(page)
    plot = LivePlot("train/learning_rate", "value")
    QVBoxLayout(page).addWidget(plot)
    page.resize(300, 200)
    page.show()
    axis = plot.getPlotItem().getAxis("bottom")
    assert axis.style["showValues"] is False  # a time axis over nothing read "00.500"
    buf = plot.add_series("lr", "learning rate", "#1f77b4", symbol="o", line=False)
    buf.append(8000, 1.0, 3e-4)
    assert plot.refresh()
    qtbot.waitUntil(lambda: plot.getPlotItem().vb.viewRange()[1][1] < 0.01)
    low, high = plot.getPlotItem().vb.viewRange()[1]
    assert 2.7e-4 <= low < 3e-4 < high <= 3.3e-4  # 3e-4 drawn at 3e-4, not as 0 on a +-0.4 axis
    assert axis.style["showValues"] is True
    buf.append(9000, 2.0, 1e-4)  # no longer flat: autoscale spans the data
    plot.refresh()
    qtbot.waitUntil(lambda: plot.getPlotItem().vb.viewRange()[1][0] < 1.1e-4)
