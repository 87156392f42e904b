"""On a laptop screen Configure folds away while the Results tab is shown, and comes back with any other tab.

Measured at 1280x720 logical (1920x1080 at 150 %) and 1366x768: beside Configure the tabs are about 690 px wide and
Results' table, right of its runs list, 388 px: a group's mean began at 567 px, its difference from the baseline at
1,516 px. Folded, the table has 978 px (1,064 at 1366x768). The Runs tab keeps Configure: its name, state, steps and
mean reward come first and end at about 540 of its 676 px. A button in the tabs' corner shows Configure again for
this visit.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QToolButton

from app.configure.panel import ConfigurePanel
from app.widgets.lazy_tabs import LazyTabs

FOLDED_FOR = ("Results",)


class ConfigureFold(QObject):
    """Folds ``configure`` (hides it: the splitter gives its room to the tabs) while a tab of ``FOLDED_FOR`` is
    current and ``configure.compact`` says the screen is a laptop's."""

    def __init__(self, configure: ConfigurePanel, lazy_tabs: LazyTabs):
        super().__init__(configure)
        self.configure = configure
        self.lazy_tabs = lazy_tabs
        self.kept = False  # the user showed Configure on this visit to the tab
        self.button = QToolButton()
        self.button.setObjectName("showConfigure")
        self.button.setText("Show Configure")
        self.button.setToolTip("Configure is folded away while Results is shown on a screen this size, so the table has "
                               "room for its figures; it comes back with the other tabs")
        self.button.setAutoRaise(True)
        self.button.clicked.connect(self.unfold)
        lazy_tabs.tabs.setCornerWidget(self.button, Qt.Corner.TopRightCorner)
        self.button.hide()
        lazy_tabs.tabs.currentChanged.connect(self._tab_changed)
        configure.compact_changed.connect(lambda _compact: self.update())

    def folded(self) -> bool:
        return self.configure.isHidden()

    def update(self) -> None:
        """Fold or unfold for the current tab and screen."""
        fold = self.configure.compact and self.lazy_tabs.current_name() in FOLDED_FOR and not self.kept
        self.configure.setHidden(fold)
        self.button.setVisible(fold)

    def unfold(self) -> None:
        """Configure beside the tabs again, until another tab is shown."""
        self.kept = True
        self.update()

    def _tab_changed(self, _index: int) -> None:
        self.kept = False
        self.update()
