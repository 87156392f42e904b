"""The policy form's own network (issue 30): a Browse... button beside ``policy.features_extractor`` and
``policy.class`` that picks a Python file, then a class in it.

The file is read with ``ast``, never imported (nothing of the user's code runs before Launch asks
to trust it). The module is named relative to the launch folder when the file is inside it
(``nets/gat.py`` -> ``nets.gat``); a file elsewhere is its own module and its folder becomes the
run's import folder (``env.path``) when none is set yet. The kwargs are the generated YAML field
beside it (``policy.features_extractor_kwargs``: a mapping, the schema's error at the field).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QInputDialog, QToolButton, QWidget

from app.configure.forms import FieldRow

BROWSED = ("policy.features_extractor", "policy.class")


def classes_in(path: Path) -> list[str]:
    """The classes defined at the top of the Python file ``path`` (read, not imported); [] when it cannot be parsed."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


def module_for(path: Path, folder: Path) -> tuple[str | None, str | None]:
    """(module name, import folder to record or None) for the file ``path`` seen from the launch ``folder``;
    (None, None) when its name cannot be a module's."""
    path, folder = path.resolve(), folder.resolve()
    try:
        parts = list(path.relative_to(folder).with_suffix("").parts)
        where = None
    except ValueError:
        parts, where = [path.stem], str(path.parent)
    if not parts or not all(p.isidentifier() for p in parts):
        return None, None
    return ".".join(parts), where


class BrowseButton(QToolButton):
    """Browse... beside one of the own-network rows; ``picked(path, "module:Class", import folder or "")``."""

    picked = Signal(str, str, str)
    problem = Signal(str, str)  # path, why the file offers no class

    def __init__(self, row: FieldRow, folder: str | None = None, parent: QWidget | None = None):
        super().__init__(parent or row)
        self.path = row.path
        self.folder = Path(folder or os.getcwd())
        self.setText("\u2026")  # compact: the narrow form column keeps its room for the module:Class
        self.setObjectName(f"{row.path}.browse")
        self.setToolTip("Pick the Python file of your network, then the class in it (read, not run)")
        self.clicked.connect(self.browse)

    def browse(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Your network's Python file", str(self.folder), "Python files (*.py)")
        if name:
            self.choose(Path(name))

    def choose(self, file: Path) -> None:
        """The class to use from ``file``: the only one, or the one the user picks from the list."""
        classes = classes_in(file)
        module, where = module_for(file, self.folder)
        if module is None or not classes:
            why = "it defines no class" if module is not None else "its name is not a Python module's"
            self.problem.emit(self.path, f"{file.name} cannot be used: {why}; type module:Class instead")
            return
        chosen: str | None = classes[0]
        if len(classes) > 1:
            chosen, ok = QInputDialog.getItem(self, "Which class?", f"The class in {file.name}:", classes, 0, False)
            chosen = chosen if ok else None
        if chosen:
            self.picked.emit(self.path, f"{module}:{chosen}", where or "")


def add_browse_button(row: FieldRow, folder: str | None = None) -> BrowseButton:
    """A Browse... button on ``row``'s line, after its editor."""
    button = BrowseButton(row, folder)
    box = row.layout()
    first = box.itemAt(0) if box is not None else None
    line = first.layout() if first is not None else None
    if isinstance(line, QHBoxLayout):
        line.insertWidget(1, button)
    return button
