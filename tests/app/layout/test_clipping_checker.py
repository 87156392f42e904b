"""The clipping checker finds what a person would see cut (so the window's test can fail), and passes what fits."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from app.widgets.elided_label import ElidedLabel
from app.widgets.toolbar import panel_toolbar
from tests.app.layout.clipping import findings


def shown(qtbot, widget: QWidget, width: int, height: int = 200) -> QWidget:
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_a_squeezed_button_combo_and_label_are_named_with_their_room(qtbot):
    page = QWidget()
    row = QHBoxLayout(page)
    button, combo, label = QPushButton("Export table…"), QComboBox(), QLabel("Smoothing")
    combo.addItem("x: timesteps")
    for widget in (button, combo, label):
        widget.setFixedWidth(39)
        row.addWidget(widget)
    found = findings(shown(qtbot, page, 400))
    assert any("QPushButton 'Export table…' 39 px for" in line for line in found), found
    assert any("QComboBox 'x: timesteps' 39 px" in line for line in found), found
    assert any("QLabel 'Smoothing'" in line for line in found), found


def test_a_form_wider_than_its_view_and_a_window_wider_than_the_screen(qtbot):
    content = QWidget()
    content.setMinimumWidth(500)
    QVBoxLayout(content).addWidget(QLabel("Learning rate"))
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(content)
    found = findings(shown(qtbot, scroll, 300))
    assert any("its content needs" in line and "a sideways scroll" in line for line in found), found
    wide = shown(qtbot, QLabel("x"), scroll.screen().availableGeometry().width() + 50)
    assert any("the screen has" in line for line in findings(wide))


def test_what_fits_an_elided_name_and_a_toolbars_overflow_pass(qtbot):
    page = QWidget()
    box = QVBoxLayout(page)
    title = ElidedLabel("20261126-174109-ppo-cartpole-v1-a-very-long-run-name-indeed")
    box.addWidget(title)
    box.addWidget(panel_toolbar("bar", [QPushButton(f"Action number {i}") for i in range(8)]))
    box.addWidget(QPushButton("Fits"))
    shown(qtbot, page, 300)
    assert findings(page) == []
    assert title.is_elided() and title.toolTip().startswith("20261126-174109")  # the whole name on hover
    assert title.text().endswith("indeed")  # text() stays whole
