"""Tabs built when first shown: a placeholder page stands in until the tab is first made current
(or its panel is first asked for), then the panel takes its place (docs/window.md:
what the first frame waits for)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget


class LazyTabs(QObject):
    """The pages of ``tabs``: ``add(name, factory)`` puts a placeholder there, ``get(name)`` builds the page
    (once) and swaps it in at the same index, current if the placeholder was. A tab made current builds
    before ``currentChanged``'s later slots run, so they see the real page; a placeholder current from the
    start (the first tab) waits for its owner's ``get``."""

    built = Signal(str, QWidget)  # the name and the page, once, right after it took its placeholder's place

    def __init__(self, tabs: QTabWidget):
        super().__init__(tabs)
        self.tabs = tabs
        self._factories: dict[str, Callable[[], QWidget]] = {}
        self._pages: dict[str, QWidget] = {}
        tabs.currentChanged.connect(self._current_changed)  # connected first: the page exists for the others

    def add(self, name: str, factory: Callable[[], QWidget] | QWidget, waiting: str = "") -> None:
        """A tab named ``name``: a widget now, or a factory called when the tab is first needed (the placeholder
        says ``waiting`` meanwhile: a tab shown in the first frame and built right after it)."""
        if isinstance(factory, QWidget):
            self._pages[name] = factory
            self.tabs.addTab(factory, name)
            return
        self._factories[name] = factory
        placeholder = QWidget()
        placeholder.setObjectName(f"lazyTab{name}")
        if waiting:
            label = QLabel(waiting, placeholder)
            label.setEnabled(False)
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            QVBoxLayout(placeholder).addWidget(label)
        blocked = self.tabs.blockSignals(True)  # the first tab added becomes current: that is no showing yet
        try:
            self.tabs.addTab(placeholder, name)
        finally:
            self.tabs.blockSignals(blocked)

    def is_built(self, name: str) -> bool:
        return name in self._pages

    def built_pages(self) -> list[QWidget]:
        return list(self._pages.values())

    def names(self) -> list[str]:
        return [self.tabs.tabText(i) for i in range(self.tabs.count())]

    def current_name(self) -> str:
        return self.tabs.tabText(self.tabs.currentIndex())

    def get(self, name: str) -> QWidget:
        """The page named ``name``, built now if it was not yet."""
        page = self._pages.get(name)
        if page is not None:
            return page
        page = self._factories.pop(name)()
        self._pages[name] = page
        index = self.names().index(name)
        placeholder = self.tabs.widget(index)
        current = self.tabs.currentIndex() == index
        blocked = self.tabs.blockSignals(True)  # the swap is no change of tab for the window
        try:
            self.tabs.removeTab(index)
            self.tabs.insertTab(index, page, name)
            if current:
                self.tabs.setCurrentIndex(index)
        finally:
            self.tabs.blockSignals(blocked)
        if placeholder is not None:
            placeholder.deleteLater()
        self.built.emit(name, page)
        return page

    def build_all(self) -> None:
        for name in list(self._factories):
            self.get(name)

    def _current_changed(self, index: int) -> None:
        name = self.tabs.tabText(index)
        if index >= 0 and name in self._factories:
            self.get(name)
