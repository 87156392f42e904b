"""The builders of the tabs built when first shown (Results, Queue, Sweeps, System): each imports its panel's module
when called, so the window's first frame waits for none of them (pyqtgraph, scipy, optuna's tables...)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from app.theme import apply_plot_theme

if TYPE_CHECKING:
    from app.configure.model import ConfigModel


def later_tabs(runs_dir: Path, config: ConfigModel, open_run: Callable[[Path], None]) -> dict[str, Callable[[], QWidget]]:
    """Results, Queue, Sweeps and System, by tab name: a run activated in Queue or Sweeps is opened with ``open_run``;
    a calibration in System has Configure estimate again."""

    def results() -> QWidget:
        apply_plot_theme()
        from app.results.panel import ResultsPanel

        return ResultsPanel(runs_dir)

    def queue() -> QWidget:
        from app.queue.panel import QueuePanel

        page = QueuePanel(runs_dir, config)
        page.run_activated.connect(open_run)
        return page

    def sweeps() -> QWidget:
        apply_plot_theme()
        from app.sweeps.panel import SweepsPanel

        page = SweepsPanel(runs_dir)
        page.run_activated.connect(open_run)
        return page

    def system() -> QWidget:
        from app.system.panel import SystemPanel

        page = SystemPanel(runs_dir)
        page.calibrated.connect(lambda _cal: config.recheck())  # the card's measured costs: estimate again
        return page

    return {"Results": results, "Queue": queue, "Sweeps": sweeps, "System": system}
