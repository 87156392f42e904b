"""A tree widget's top-level rows as a list (Qt's ``topLevelItem`` may answer None: typed here once)."""

from __future__ import annotations

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem


def top_items(tree: QTreeWidget) -> list[QTreeWidgetItem]:
    items = (tree.topLevelItem(i) for i in range(tree.topLevelItemCount()))
    return [item for item in items if item is not None]
