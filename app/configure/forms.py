"""Forms generated from the config schema: one row per field, no per-field UI code.

A ``SectionForm`` is built from a section's fields as plain data (``core.config.field_index``: the shipped index, so
the window's first frame needs neither pydantic nor the schema) or from a section model (``PPOParams``, read off
the live schema) and a dotted prefix (``ppo``); each ``FieldRow`` holds the editor its field's kind names, a reset
button shown while the value differs from the preset, and the schema's error message.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Self, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.configure.fields import parse_text
from app.configure.schedule_editor import ScheduleEditor
from app.theme import error_color
from core.config.field_index import FieldKind, FieldSpec, format_value

if TYPE_CHECKING:
    from pydantic import BaseModel


def empty_meaning(description: str) -> str:
    """What leaving an optional field empty means, from its help ('... (empty: never).')."""
    match = re.search(r"empty: ([^)]*)\)?", description)
    return match.group(1).rstrip(".") if match else "empty"


def insert_below(form: QWidget, row: QWidget, widget: QWidget) -> None:
    """Put ``widget`` in ``form``'s layout (a SectionForm's QFormLayout) on the line below field ``row``."""
    layout = form.layout()
    assert isinstance(layout, QFormLayout), "a SectionForm lays its rows out in a QFormLayout"
    index, _ = cast(tuple[int, QFormLayout.ItemRole], layout.getWidgetPosition(row))  # typed object in the stubs
    layout.insertRow(index + 1, widget)


class FieldHint(QLabel):
    """A muted line on the line below a field's row (``under``), hidden until its subclass has something to say."""

    def __init__(self, row: FieldRow, parent: QWidget | None = None):
        super().__init__(parent)
        self.row = row
        self.setWordWrap(True)
        self.setEnabled(False)  # the palette's muted text, as the unit labels: a note, not an error
        self.hide()

    @classmethod
    def under(cls, form: QWidget, row: FieldRow) -> Self:
        """A hint placed in ``form``'s layout (a QFormLayout) on the line below ``row``."""
        hint = cls(row)
        insert_below(form, row, hint)
        return hint


def value_tip(text: str, help_text: str) -> str:
    """A text field's tip: its whole value first once it is long (a module:Class, a mapping a narrow column cuts),
    then its help."""
    return f"{text}\n\n{help_text}" if len(text) > 20 else help_text


class FieldRow(QWidget):
    """The editor of one config field, its reset button and its error message."""

    edited = Signal(str, object)  # path, raw value (what the user typed, parsed)
    reset_requested = Signal(str)

    def __init__(self, spec: FieldSpec, parent: QWidget | None = None):
        super().__init__(parent)
        self.path = spec.path
        self.kind: FieldKind = spec.kind
        self.description = spec.description
        self._value: Any = None
        self._error: str | None = None
        self.label = QLabel(spec.title)
        self.label.setToolTip(spec.tip)
        self.label.setBuddy(self)
        self.editor = self._make_editor()
        if not isinstance(self.editor, (QCheckBox, ScheduleEditor)):  # room for 1e-05 or 1000000 before the row wraps
            self.editor.setMinimumWidth(self.editor.fontMetrics().horizontalAdvance("0" * 10))
        self.help = spec.tip
        self.editor.setToolTip(self.help)
        self.editor.setObjectName(self.path)
        if isinstance(self.editor, QLineEdit):  # a value longer than the field (a module:Class, a mapping): whole in its tip
            self.editor.textChanged.connect(self._value_tip)
        self.reset_button = QToolButton()
        self.reset_button.setText("\u21ba")
        self.reset_button.setAutoRaise(True)
        self.reset_button.setToolTip("Changed from the preset: click to reset it to the preset's value")
        self.reset_button.clicked.connect(lambda: self.reset_requested.emit(self.path))
        # Keep the space reserved so rows do not jump sideways when a value changes.
        policy = self.reset_button.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.reset_button.setSizePolicy(policy)
        self.reset_button.hide()
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.hide()

        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        line.setSpacing(6)  # its own: a nested layout takes the column's 2 px, and a unit touched its field
        line.addWidget(self.editor, 1)
        # Every row has a unit slot (maybe empty) so editors line up; the panel evens their widths.
        self.unit_label = QLabel(spec.unit if self.kind.editor == "number" else "")
        self.unit_label.setEnabled(False)  # the palette's disabled text: muted in light and dark themes
        line.addWidget(self.unit_label)
        line.addWidget(self.reset_button)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addLayout(line)
        box.addWidget(self.error_label)

    def _value_tip(self, text: str) -> None:
        assert isinstance(self.editor, QLineEdit)
        self.editor.setToolTip(value_tip(text, self.help))

    def _make_editor(self) -> QWidget:
        kind = self.kind
        if kind.editor == "schedule":
            schedule = ScheduleEditor()
            schedule.edited.connect(self._user_edit)
            return schedule
        if kind.editor == "bool":
            editor = QCheckBox()
            editor.clicked.connect(lambda checked: self._user_edit(bool(checked)))
            return editor
        if kind.options:
            combo = QComboBox()
            combo.addItems(list(kind.options))
            combo.setEditable(kind.editable)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(6)
            if kind.editable and (line := combo.lineEdit()) is not None:
                line.textEdited.connect(lambda text: self._user_edit(parse_text(text, kind)))
                combo.activated.connect(lambda _i: self._user_edit(parse_text(combo.currentText(), kind)))
            else:
                combo.activated.connect(lambda _i: self._user_edit(parse_text(combo.currentText(), kind)
                                                                   if kind.optional else combo.currentText()))
            return combo
        edit = QLineEdit()
        if kind.optional:
            edit.setPlaceholderText(empty_meaning(self.description))
        edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        edit.textEdited.connect(lambda text: self._user_edit(parse_text(text, kind)))
        return edit

    def _user_edit(self, value: Any) -> None:
        self._value = value
        self.edited.emit(self.path, value)

    def value(self) -> Any:
        return self._value

    def text(self) -> str:
        if isinstance(self.editor, QCheckBox):
            return format_value(self.editor.isChecked())
        if isinstance(self.editor, ScheduleEditor):
            return self.editor.text()
        if isinstance(self.editor, QComboBox):
            return self.editor.currentText()
        assert isinstance(self.editor, QLineEdit)
        return self.editor.text()

    def set_text(self, text: str) -> None:
        """Type ``text`` as a user would (tests and the suggestion button use this)."""
        if isinstance(self.editor, ScheduleEditor):
            self.editor.set_text(text)  # emits edited, which reaches _user_edit
            return
        if isinstance(self.editor, QComboBox) and self.editor.isEditable():
            self.editor.setEditText(text)
        elif isinstance(self.editor, QLineEdit):
            self.editor.setText(text)
        self._user_edit(parse_text(text, self.kind))

    def set_value(self, value: Any) -> None:
        """Show ``value`` without emitting ``edited``; text being typed that means the same is kept."""
        if self._value == value and type(self._value) is type(value) and self.text():
            return
        self._value = value
        text = format_value(value, self.kind)
        editor = self.editor
        if isinstance(editor, ScheduleEditor):
            editor.show_value(value)
            return
        editor.blockSignals(True)
        try:
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QComboBox):
                index = editor.findText(text)
                if index >= 0:
                    editor.setCurrentIndex(index)
                elif editor.isEditable():
                    editor.setEditText(text)
            else:
                assert isinstance(editor, QLineEdit)
                editor.setText(text)
                self._value_tip(text)  # its signals are blocked here
                if not editor.hasFocus():  # a value longer than the field shows its start (a module:Class, a mapping)
                    editor.setCursorPosition(0)
        finally:
            editor.blockSignals(False)

    def set_placeholder(self, text: str) -> None:
        """What the empty editor shows (a line edit's; other editors have none)."""
        if isinstance(self.editor, QLineEdit):
            self.editor.setPlaceholderText(text)

    def set_changed(self, changed: bool) -> None:
        font = self.label.font()
        font.setBold(changed)
        self.label.setFont(font)
        self.reset_button.setVisible(changed)

    def set_error(self, message: str | None) -> None:
        if message == self._error:
            return
        self._error = message
        if message:
            color = error_color(self).name()
            self.error_label.setText(message)
            self.error_label.setStyleSheet(f"color: {color};")
            self.editor.setStyleSheet(f"border: 1px solid {color};" if not isinstance(self.editor, QCheckBox)
                                      else f"QCheckBox::indicator {{ border: 1px solid {color}; }}")
        else:
            self.editor.setStyleSheet("")
        self.error_label.setVisible(bool(message))
        self.editor.setProperty("invalid", bool(message))

    def error(self) -> str | None:
        return self._error


class SectionForm(QGroupBox):
    """All fields of one schema section, nested sections as group boxes inside.

    ``section``: the section's fields (``FieldSpec``, at their paths already), or a section model read off the live
    schema at ``prefix`` (a form of a model the index does not hold)."""

    edited = Signal(str, object)
    reset_requested = Signal(str)

    def __init__(self, section: tuple[FieldSpec, ...] | type[BaseModel], prefix: str, title: str | None = None,
                 exclude: tuple[str, ...] = (), parent: QWidget | None = None):
        super().__init__(title or str(getattr(section, "__name__", prefix)), parent)
        if not isinstance(section, tuple):  # a model: read off the live schema
            from core.config.field_scan import section_fields

            section = section_fields(section, prefix)
        fields = section
        self.prefix = prefix
        self.nested = False  # a section inside another's form (runtime's VecNormalize)
        self.rows: dict[str, FieldRow] = {}
        layout = QFormLayout(self)
        layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        layout.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # narrow panel: editor below its label
        for spec in fields:
            if spec.name in exclude:
                continue
            if spec.fields is not None:
                sub = SectionForm(spec.fields, spec.path, spec.title)
                sub.edited.connect(self.edited)
                sub.reset_requested.connect(self.reset_requested)
                self.rows.update(sub.rows)
                layout.addRow(sub)
                sub.nested = True
                continue
            row = FieldRow(spec)
            row.edited.connect(self.edited)
            row.reset_requested.connect(self.reset_requested)
            self.rows[spec.path] = row
            layout.addRow(row.label, row)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's
        """A nested section asks for the height its rows need at its width: its parent's QFormLayout gives a spanning
        row its one-line height (sizeHint), not its height for width, so rows that wrap (label above the editor) were
        squeezed to half a line after a relayout (VecNormalize at 1366x768 once an algorithm's form was swapped in)."""
        super().resizeEvent(event)
        layout = self.layout()
        if self.nested and layout is not None and layout.hasHeightForWidth():
            needed = layout.totalHeightForWidth(self.width())
            if needed > 0 and needed != self.minimumHeight():
                self.setMinimumHeight(needed)
