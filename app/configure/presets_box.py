"""The preset list: built-in and user presets, broken files flagged, and the preset actions.

Every file operation goes through ``core.config.presets`` (which never overwrites without being asked);
this box only asks the user (names, confirmations) and shows the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.configure.state import ConfigState
from app.theme import error_color
from app.widgets.wrap_label import wrap_long_words
from core.config.errors import ConfigError
from core.config.presets import (
    Preset,
    delete_user_preset,
    get_preset,
    list_presets,
    rename_user_preset,
    resolve_raw,
    save_user_preset,
)
from core.util.text import safe_name

if TYPE_CHECKING:
    from app.configure.zoo_import import ZooImportDialog

NO_PRESET = "(schema defaults)"
NAME_ROLE = Qt.ItemDataRole.UserRole


class SavePresetDialog(QDialog):
    """Name and description of a new user preset."""

    def __init__(self, name: str, description: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Save as user preset")
        self.name_edit = QLineEdit(name)
        self.name_edit.setPlaceholderText("a-z, 0-9, '.', '_' and '-'")
        self.description_edit = QLineEdit(description)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Name", self.name_edit)
        form.addRow("Description", self.description_edit)
        form.addRow(buttons)
        self.resize(420, self.sizeHint().height())


class PresetsBox(QGroupBox):
    """Emits ``preset_selected(name or None)`` when the user picks a usable preset."""

    preset_selected = Signal(object)

    def __init__(self, state: ConfigState, parent: QWidget | None = None):
        super().__init__("Presets", parent)
        self.state = state
        self.presets: dict[str, Preset] = {}
        self.list = QListWidget()
        rows = self.list.fontMetrics().lineSpacing() + 4
        self.list.setMinimumHeight(rows * 4)
        self._list_max = rows * 8
        self.list.setMaximumHeight(self._list_max)
        self.list.currentItemChanged.connect(self._current_changed)
        self.description = wrap_long_words(QLabel())  # the user's description, or "Broken file <path>"
        self.description.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons: dict[str, QToolButton] = {}
        row = QGridLayout()  # rows of two buttons keep the panel as narrow as the forms it shares a column with
        for index, (key, text, tip, slot) in enumerate((
                ("save", "Save as\u2026", "Save the current settings as a user preset", self.ask_save),
                ("duplicate", "Duplicate", "Copy the selected preset to a new user preset", self.ask_duplicate),
                ("rename", "Rename\u2026", "Rename the selected user preset", self.ask_rename),
                ("delete", "Delete", "Delete the selected user preset", self.ask_delete),
                ("diff", "Diff\u2026", "Compare the selected preset with its base, side by side", self.show_diff),
                ("zoo", "Import rl_zoo3\u2026", "Turn rl_zoo3 hyperparameter entries into presets zoo-<algo>-<env> "
                 "(same as rlpanel zoo import)", self.ask_zoo_import))):
            button = QToolButton()
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            row.addWidget(button, index // 2, index % 2)
            self.buttons[key] = button
        row.setColumnStretch(2, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.description)
        layout.addLayout(row)
        self.reload()

    def fill_column(self, fill: bool) -> None:
        """On a laptop screen the list has the forms' column to itself: it grows; above the forms it stays short."""
        self.list.setMaximumHeight((1 << 24) - 1 if fill else self._list_max)

    # --- listing ---------------------------------------------------------------------------

    def reload(self, select: str | None = None) -> None:
        """Read the preset folders again; keep (or move to) ``select``; emit nothing."""
        current = select if select is not None else self.selected()
        self.checked = self.state.presets_checked  # else read only: validated with the config's first validation
        self.presets = {p.name: p for p in list_presets(self.checked)}
        self.state.invalidate()
        warn = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        self.list.blockSignals(True)
        self.list.clear()
        defaults = QListWidgetItem(NO_PRESET)
        defaults.setToolTip("No preset: every field at the schema's default")
        self.list.addItem(defaults)
        for preset in self.presets.values():
            item = QListWidgetItem(self._label(preset))
            item.setData(NAME_ROLE, preset.name)
            if preset.error:
                item.setIcon(warn)
                item.setForeground(error_color(self))
                item.setToolTip(f"{preset.path}\nbroken: {preset.error}")
            else:
                item.setToolTip(preset.description or preset.name)
            self.list.addItem(item)
        self.list.blockSignals(False)
        self._select_item(current)
        self._show_details()

    @staticmethod
    def _label(preset: Preset) -> str:
        tags = ["built-in" if preset.builtin else "user"] + (["broken"] if preset.error else [])
        return f"{preset.name}  ({', '.join(tags)})"

    def _select_item(self, name: str | None) -> None:
        self.list.blockSignals(True)
        for i in range(self.list.count()):
            if self.list.item(i).data(NAME_ROLE) == name:
                self.list.setCurrentRow(i)
                break
        else:
            self.list.setCurrentRow(0)
        self.list.blockSignals(False)

    def select(self, name: str | None) -> None:
        """Select ``name`` in the list without emitting ``preset_selected``."""
        self._select_item(name)
        self._show_details()

    def selected(self) -> str | None:
        item = self.list.currentItem()
        name = item.data(NAME_ROLE) if item is not None else None
        return name if isinstance(name, str) else None

    def broken(self) -> dict[str, str]:
        """Broken preset files: name -> error."""
        return {n: p.error for n, p in self.presets.items() if p.error}

    def _current_changed(self, *_args: Any) -> None:
        self._show_details()
        name = self.selected()
        if name is None or not self.presets[name].error:
            self.preset_selected.emit(name)

    def _show_details(self) -> None:
        name = self.selected()
        preset = self.presets.get(name) if name else None
        if preset is None:
            self.description.setText("Every field at the schema's default.")
        elif preset.error:
            self.description.setText(f"Broken file {preset.path}: {preset.error}. It is left as it is; fix it in an editor.")
        else:
            base = f" Based on {preset.base}." if preset.base else ""
            self.description.setText((preset.description or "(no description)") + base)
        self.description.setStyleSheet(f"color: {error_color(self).name()};" if preset and preset.error else "")
        user = preset is not None and not preset.builtin
        self.buttons["rename"].setEnabled(preset is not None and not preset.builtin and not preset.error)
        self.buttons["delete"].setEnabled(user)
        self.buttons["duplicate"].setEnabled(preset is not None and not preset.error)
        self.buttons["diff"].setEnabled(preset is not None and not preset.error)

    # --- actions without dialogs (the dialogs call these; so do tests) ---------------------

    def save_as(self, name: str, description: str = "", overwrite: bool = False) -> str:
        """Save the current preset plus overrides as user preset ``name``; raise ``ConfigError``."""
        preset = self.state.preset
        data, base = self.state.overrides, preset
        if preset == name:  # overwriting the preset being edited: fold the edits into its own data
            own = self.presets[name]
            data, base = {**own.overrides}, own.base
            from core.config.dotted import merge

            data = merge(data, self.state.overrides)
        try:
            save_user_preset(name, data, description, base, overwrite=overwrite)
        except ConfigError as exc:
            if any(i.path == "name" for i in exc.issues):
                raise
            # core validates a preset over the defaults, not over its base: store it flattened
            flat = {k: v for k, v in resolve_raw(preset, self.state.overrides).items() if k != "schema_version"}
            save_user_preset(name, flat, description, None, overwrite=overwrite)
        self.reload(select=name)
        return name

    def duplicate(self, name: str, new_name: str) -> str:
        source = get_preset(name)
        save_user_preset(new_name, source.overrides, source.description, source.base)
        self.reload(select=new_name)
        return new_name

    def rename(self, old: str, new: str) -> str:
        rename_user_preset(old, new)
        self.reload(select=new)
        return new

    def delete(self, name: str) -> None:
        delete_user_preset(name)
        self.reload(select=None)

    # --- dialogs ---------------------------------------------------------------------------

    def ask_save(self) -> None:
        current = self.state.preset
        suggested = safe_name(f"{current}-mine") if current else "my-preset"
        description = self.presets[current].description if current in self.presets else ""
        dialog = SavePresetDialog(suggested, description, self)
        while dialog.exec() == QDialog.DialogCode.Accepted:
            name, text = dialog.name_edit.text().strip(), dialog.description_edit.text().strip()
            overwrite = False
            existing = self.presets.get(name)
            if existing is not None and not existing.builtin:
                if not self.confirm("Replace preset", f"User preset {name!r} exists ({existing.path}). Replace it?"):
                    continue
                overwrite = True
            if self._try(lambda n=name, t=text, o=overwrite: self.save_as(n, t, o)):
                self.preset_selected.emit(name)
                return

    def ask_duplicate(self) -> None:
        name = self.selected()
        if name is None:
            return
        new = self.ask_text("Duplicate preset", f"Name of the copy of {name}:", safe_name(f"{name}-copy"))
        if new and self._try(lambda: self.duplicate(name, new)):
            self.preset_selected.emit(new)

    def ask_rename(self) -> None:
        name = self.selected()
        if name is None:
            return
        new = self.ask_text("Rename preset", f"New name for {name}:", name)
        if new and new != name and self._try(lambda: self.rename(name, new)):
            self.preset_selected.emit(new)

    def ask_delete(self) -> None:
        name = self.selected()
        if name is None or self.presets[name].builtin:
            return
        if self.confirm("Delete preset", f"Delete user preset {name!r} ({self.presets[name].path})? This cannot be undone."):
            if self._try(lambda: self.delete(name)):
                self.preset_selected.emit(None)

    def show_diff(self) -> None:
        name = self.selected()
        if name is not None:
            from app.configure.preset_diff import PresetDiffDialog  # dialogs on demand: their modules load when opened

            PresetDiffDialog(name, self).exec()

    def zoo_import_dialog(self) -> ZooImportDialog:
        """The import dialog; the list is read again (and the first imported preset selected) after each import."""
        from app.configure.zoo_import import ZooImportDialog

        dialog = ZooImportDialog(self)
        dialog.imported.connect(self._zoo_imported)
        return dialog

    def ask_zoo_import(self) -> None:
        self.zoo_import_dialog().exec()

    def _zoo_imported(self, results: list[Any]) -> None:
        first = next((r.preset for r in results if r.status != "refused"), None)
        self.reload(select=first)
        if first is not None:
            self.preset_selected.emit(first)

    def _try(self, action: Any) -> bool:
        try:
            action()
        except (ConfigError, OSError) as exc:
            QMessageBox.warning(self, "Preset", str(exc))
            return False
        return True

    # Dialog seams: tests replace these two instead of driving modal dialogs.
    def ask_text(self, title: str, label: str, text: str) -> str | None:
        from PySide6.QtWidgets import QInputDialog

        value, ok = QInputDialog.getText(self, title, label, QLineEdit.EchoMode.Normal, text)
        return value.strip() if ok and value.strip() else None

    def confirm(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text, QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes
