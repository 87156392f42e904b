"""The Presets box's "Import rl_zoo3..." dialog: pick an installed zoo file (or any .yml), the
entries to import, import them off the GUI thread, and show one report line per entry.

Everything is done by ``core.zoo.importer`` (the same code as ``rlpanel zoo import``); this
dialog only chooses and shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.theme import error_color, zoo_import_color
from app.threads.background import run_in_background
from app.widgets.name_combo import NameCombo
from core.util.yaml_reader import read_yaml_mapping
from core.zoo.importer import ImportResult, import_zoo_file, installed_zoo_files, summary_line, zoo_algo_of
from core.zoo.translate import ZOO_ALGOS

HOW_TO_GET = 'rl_zoo3 is not installed here: pip install rl_zoo3 (or choose a zoo .yml file with "File...")'


class ZooImportDialog(QDialog):
    """Emits ``imported(list[ImportResult])`` when an import has finished (the box reloads its list)."""

    imported = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Import rl_zoo3 hyperparameters")
        self.path: Path | None = None
        self.zoo_algo: str | None = None
        self.results: list[ImportResult] = []
        self.files = installed_zoo_files()
        self.source = NameCombo(30)  # a browsed file's folder is in its line: the dialog stays as wide as the screen allows
        for zoo_algo, path in self.files.items():
            self.source.addItem(f"{zoo_algo}.yml ({ZOO_ALGOS[zoo_algo]}, installed rl_zoo3)", str(path))
        self.source.currentIndexChanged.connect(self._source_changed)
        browse = QPushButton("File\u2026")
        browse.setToolTip("A zoo hyperparameter file named after its algorithm (ppo.yml, sac.yml, ...)")
        browse.clicked.connect(self.ask_file)
        top = QHBoxLayout()
        top.addWidget(QLabel("Source"))
        top.addWidget(self.source, 1)
        top.addWidget(browse)
        self.message = QLabel(HOW_TO_GET if not self.files else "")
        self.message.setWordWrap(True)
        self.entries = QListWidget()
        self.entries.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.entries.setToolTip("The entries to import (one preset zoo-<algo>-<env> each); all by default")
        self.overwrite = QCheckBox("Replace user presets of the same name")
        self.import_button = QPushButton("Import")
        self.import_button.setDefault(True)
        self.import_button.clicked.connect(self.start_import)
        self.report = QTreeWidget()
        self.report.setHeaderLabels(["Status", "Env", "Preset", "Details"])
        self.report.setRootIsDecorated(True)
        self.summary = QLabel()
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.message)
        layout.addWidget(QLabel("Entries"))
        layout.addWidget(self.entries, 1)
        self.entries.setMaximumHeight(self.entries.fontMetrics().lineSpacing() * 7)
        row = QHBoxLayout()
        row.addWidget(self.overwrite, 1)
        row.addWidget(self.import_button)
        layout.addLayout(row)
        layout.addWidget(QLabel("Report"))
        layout.addWidget(self.report, 4)
        layout.addWidget(self.summary)
        layout.addWidget(close)
        self.resize(1180, 720)
        if self.files:
            self._source_changed()
        else:
            self.import_button.setEnabled(False)

    # --- choosing --------------------------------------------------------------------------

    def _source_changed(self, *_args: Any) -> None:
        data = self.source.currentData()
        if data:
            self.set_file(Path(str(data)))

    def ask_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "rl_zoo3 hyperparameter file", "", "YAML (*.yml *.yaml)")
        if name:
            self.set_file(Path(name))

    def set_file(self, path: Path) -> None:
        """List ``path``'s entries, all selected; a file that cannot be read says why and imports nothing."""
        self.entries.clear()
        self.path = path
        try:
            self.zoo_algo = zoo_algo_of(path)
            names = [str(k) for k in read_yaml_mapping(path)]
        except (ValueError, OSError) as exc:
            self.path = None
            self._say(str(exc), error=True)
            self.import_button.setEnabled(False)
            return
        if str(path) not in {str(p) for p in self.files.values()}:
            self.source.blockSignals(True)
            self.source.addItem(f"{path.name} ({ZOO_ALGOS[self.zoo_algo]}, {path.parent})", str(path))
            self.source.setCurrentIndex(self.source.count() - 1)
            self.source.blockSignals(False)
        for name in names:
            item = QListWidgetItem(name)
            self.entries.addItem(item)
            item.setSelected(True)
        self._say(f"{path}: {len(names)} entries")
        self.import_button.setEnabled(bool(names))

    def selected_envs(self) -> list[str]:
        return [item.text() for item in self.entries.selectedItems()]

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {error_color(self).name()}" if error else "")

    # --- importing -------------------------------------------------------------------------

    def start_import(self) -> None:
        if self.path is None:
            return
        path, zoo_algo, overwrite = self.path, self.zoo_algo, self.overwrite.isChecked()
        envs = self.selected_envs()
        if not envs:
            self._say("select the entries to import", error=True)
            return
        self.import_button.setEnabled(False)
        self._say(f"importing {len(envs)} entries of {path.name}\u2026")
        run_in_background(lambda: import_zoo_file(path, envs, overwrite, zoo_algo=zoo_algo), self._done, self._failed)

    def _failed(self, message: str) -> None:
        self.import_button.setEnabled(True)
        self._say(f"import failed: {message}", error=True)

    def _done(self, results: list[ImportResult]) -> None:
        self.import_button.setEnabled(True)
        self.results = results
        self.show_report(results)
        self._say(f"imported from {self.path}")
        self.imported.emit(results)

    def show_report(self, results: list[ImportResult]) -> None:
        self.report.clear()
        for r in results:
            item = QTreeWidgetItem([r.status, r.env, r.preset, r.reason or _details(r)])
            item.setForeground(0, zoo_import_color(self, r.status))
            item.setToolTip(3, r.line())
            for line in [*(f"dropped {d}" for d in r.dropped), *(f"warning: {w}" for w in r.warnings)]:
                child = QTreeWidgetItem(["", "", "", line])
                child.setToolTip(3, line)
                item.addChild(child)
            self.report.addTopLevelItem(item)
            item.setExpanded(r.status != "imported" or bool(r.warnings))
        for column, width in enumerate((140, 230, 280)):
            self.report.setColumnWidth(column, width)
        self.summary.setText(summary_line(results))


def _details(r: ImportResult) -> str:
    parts = [f"{len(r.dropped)} dropped"] if r.dropped else []
    parts += [f"{len(r.warnings)} warning{'s' if len(r.warnings) > 1 else ''}"] if r.warnings else []
    return ", ".join(parts)
