"""A panel row's controls as actions, so that the row's » menu can offer the ones it has no room for.

Qt's » (the toolbar's extension menu) lists the actions of the items it hid, but skips every item added with
``QToolBar.addWidget``: that action holds one finished widget, which cannot be in the row and in a menu at once. So a
row of widgets overflowed into a » that Qt showed disabled, and 'Save plots…' or the CO2 box were out of reach.

A ``ControlAction`` is a ``QWidgetAction`` that makes its widgets: asked by the toolbar, it hands over the real
control (the panels keep using ``panel.save_button`` as before); asked by a menu, it gives the control's menu form:

- a button: a plain entry with its text (checked like the button if it toggles) that clicks the button, so every
  handler connected to ``clicked`` or ``toggled`` runs; a button with its own menu (Charts) opens that menu;
- a combo box: a submenu of its choices, the current one checked;
- a spin box or a slider: a twin box in the menu, with its caption, bound to the real one both ways;
- a label: its text.

Qt rebuilds the » menu at every layout of the row and asks again for each form, so the twins are fresh each time.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSlider,
    QSpinBox,
    QToolButton,
    QWidget,
    QWidgetAction,
)

# the kinds of control that have a menu form; panel_toolbar refuses any other, so nothing it hides is out of reach
MENU_FORMS = (QAbstractButton, QComboBox, QSpinBox, QDoubleSpinBox, QSlider, QLabel)


def has_menu_form(control: QWidget) -> bool:
    return isinstance(control, MENU_FORMS)


class ControlAction(QWidgetAction):
    """``control`` in the row (inside ``row``, when a caption or readout goes with it), its menu form behind ».

    ``refresh()`` copies the control's state (enabled, text, checked) into the entry: the panels change their controls,
    never this action, so the row's » calls it just before it opens.
    """

    def __init__(self, control: QWidget, parent: QWidget, caption: str = "", row: QWidget | None = None,
                 readout: QLabel | None = None):
        if not has_menu_form(control):
            raise TypeError(f"{type(control).__name__} has no menu form for »: give it one in {__name__}")
        super().__init__(parent)
        self.control = control
        self.caption = caption
        self.readout = readout
        self._row = row if row is not None else control
        self._choices: QMenu | None = None
        if isinstance(control, QComboBox):
            self._choices = QMenu(control)
            self._choices.aboutToShow.connect(self._fill_choices)
            self.setMenu(self._choices)
        elif isinstance(control, QPushButton | QToolButton) and control.menu() is not None:
            self.setMenu(control.menu())  # the Charts button: its own menu, as a submenu
        self.triggered.connect(self._activated)
        self.refresh()

    # --- QWidgetAction ----------------------------------------------------------------------------

    # PySide's stub says QWidget, Qt takes nullptr: the menu then shows the action itself, as an entry
    def createWidget(self, parent: QWidget) -> QWidget | None:  # type: ignore[override]  # noqa: N802 (Qt's name)
        if isinstance(parent, QMenu):
            return self._twin(parent)
        self._row.setParent(parent)  # the toolbar: the real control, made once by the panel
        return self._row

    # --- the entry --------------------------------------------------------------------------------

    def refresh(self) -> None:
        control = self.control
        # the control's own setting, not isEnabled(): a panel disabled as a whole disables its row on its own, and
        # copying that back would leave the control disabled after the panel is enabled again. Set first: every
        # change of the action sets its widgets' enabled state from the action's (QWidgetAction::event).
        self.setEnabled(not control.testAttribute(Qt.WidgetAttribute.WA_ForceDisabled))
        self.setToolTip(control.toolTip())
        if isinstance(control, QAbstractButton):
            self.setText(control.text())
            self.setCheckable(control.isCheckable())
            self.setChecked(control.isChecked())
        elif isinstance(control, QComboBox):
            self.setText(f"{self.caption}: {control.currentText()}" if self.caption else control.currentText())
        elif isinstance(control, QLabel):
            self.setText(control.text())
        else:
            self.setText(self.caption)

    def _activated(self, _checked: bool = False) -> None:
        if isinstance(self.control, QAbstractButton) and self.menu() is None:
            self.control.click()  # as a click on the button: clicked and toggled, and nothing when it is disabled

    def _fill_choices(self) -> None:
        combo, menu = self.control, self._choices
        assert isinstance(combo, QComboBox) and menu is not None
        menu.clear()
        for index in range(combo.count()):
            entry = menu.addAction(combo.itemText(index))
            entry.setCheckable(True)
            entry.setChecked(index == combo.currentIndex())
            entry.triggered.connect(partial(combo.setCurrentIndex, index))

    # --- the twin box -----------------------------------------------------------------------------

    def _twin(self, menu: QMenu) -> QWidget | None:
        """A spin box's, slider's or label's form in ``menu``: a twin bound to the control (None: a plain entry)."""
        control = self.control
        slider: QSlider | None = None
        twin: QWidget
        if isinstance(control, QDoubleSpinBox | QSpinBox):
            twin = spin_twin(control)
        elif isinstance(control, QSlider):
            twin = slider = slider_twin(control)
        elif isinstance(control, QLabel):
            twin = QLabel(control.text())
        else:
            return None
        row = QWidget(menu)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(8, 2, 8, 2)  # off the menu's edges, as its entries are (their text sits further in)
        layout.setSpacing(4)
        if self.caption:
            caption = QLabel(self.caption)
            caption.setBuddy(twin)
            layout.addWidget(caption)
        layout.addWidget(twin)
        if self.readout is not None and slider is not None:
            shown = QLabel(self.readout.text())
            shown.setMinimumWidth(self.readout.minimumWidth())
            # the twin moves after the control (either way round), when the panel's handler has written the readout;
            # the twin and this copy go together, so no call reaches a deleted label
            slider.valueChanged.connect(lambda _v, source=self.readout: shown.setText(source.text()))
            layout.addWidget(shown)
        layout.addStretch(1)
        return row


def spin_twin(source: QSpinBox | QDoubleSpinBox) -> QSpinBox | QDoubleSpinBox:
    """A box like ``source`` (range, step, prefix, suffix, 'off' text), each box setting the other."""
    twin: QSpinBox | QDoubleSpinBox
    if isinstance(source, QDoubleSpinBox):
        double = QDoubleSpinBox()
        double.setDecimals(source.decimals())
        double.setRange(source.minimum(), source.maximum())
        double.setSingleStep(source.singleStep())
        double.setValue(source.value())
        double.valueChanged.connect(source.setValue)
        source.valueChanged.connect(double.setValue)  # a Qt slot: the connection ends with the twin
        twin = double
    else:
        whole = QSpinBox()
        whole.setRange(source.minimum(), source.maximum())
        whole.setSingleStep(source.singleStep())
        whole.setValue(source.value())
        whole.valueChanged.connect(source.setValue)
        source.valueChanged.connect(whole.setValue)
        twin = whole
    twin.setPrefix(source.prefix())
    twin.setSuffix(source.suffix())
    twin.setSpecialValueText(source.specialValueText())
    twin.setKeyboardTracking(source.keyboardTracking())
    twin.setToolTip(source.toolTip())
    return twin


def slider_twin(source: QSlider) -> QSlider:
    twin = QSlider(source.orientation())
    twin.setRange(source.minimum(), source.maximum())
    twin.setSingleStep(source.singleStep())
    twin.setPageStep(source.pageStep())
    twin.setMinimumWidth(max(source.minimumWidth(), source.sizeHint().width()))
    twin.setToolTip(source.toolTip())
    twin.setValue(source.value())
    twin.valueChanged.connect(source.setValue)
    source.valueChanged.connect(twin.setValue)
    return twin
