"""What the main window needs of each of its tabs, so that it treats them alike: no tab is a special case there."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Panel(Protocol):
    """A tab's page (Monitor, Runs, Results, Queue, Sweeps, Log, System). A placeholder of a tab not built yet is
    no Panel: the window calls these only on built pages."""

    def on_shown(self) -> None:
        """The tab was made current: a page that shows the runs folder as it was reads it again."""

    def on_closing(self) -> None:
        """The window closes for good: stop the page's own threads and children (never a run)."""
