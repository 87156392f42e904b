"""Under Timesteps in the Budget box: the steps the run will really train, and a budget of whole rollouts.

SB3 trains whole rollouts (on-policy) or whole train_freq cycles (off-policy): 33,000 asked of PPO with
16 x 256 is 36,864 trained. ``core.config.steps`` says how many; this line says it where the budget is set
and offers the whole-cycle budget below and above in one click each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.configure.forms import insert_below
from core.config.steps import planned_steps, whole_cycle_budgets

if TYPE_CHECKING:  # the schema loads after the window's first frame
    from core.config.schema import RunConfig


class PlannedStepsHint(QWidget):
    """"Trains 36,864 steps (whole rollouts of 16 x 256)" and "Round to N" buttons; hidden while the steps are
    the budget. Emits ``round_clicked(int)`` with the budget a button offers."""

    round_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setEnabled(False)  # the palette's muted text, as the unit labels: a note, not an error
        self.buttons: list[QPushButton] = []
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.label)
        box.addLayout(self._row)
        self._shown: tuple[str, tuple[int, ...]] | None = None
        self.hide()

    @classmethod
    def under(cls, form: QWidget, row: QWidget) -> PlannedStepsHint:
        """A hint placed in ``form``'s layout (a QFormLayout) on the line below field ``row``."""
        hint = cls()
        insert_below(form, row, hint)
        return hint

    def show_plan(self, cfg: RunConfig | None) -> None:
        """What ``cfg`` trains (None: an invalid config, nothing to say)."""
        plan = planned_steps(cfg) if cfg is not None else None
        if plan is None or not plan.differs or cfg is None:
            self._shown = None
            self.hide()
            return
        text = plan.text()
        budgets = tuple(whole_cycle_budgets(cfg))
        if self._shown != (text, budgets):
            self._shown = (text, budgets)
            # "16 x 256" kept on one line where the label wraps
            self.label.setText((text[0].upper() + text[1:]).replace(" x ", "\u00a0x\u00a0"))
            self._set_buttons(budgets, plan.cycle.text)
        self.show()

    def _set_buttons(self, budgets: tuple[int, ...], cycle: str) -> None:
        for button in self.buttons:
            self._row.removeWidget(button)
            button.hide()  # deleted at a later event-loop turn: until then it would show under its successor
            button.deleteLater()
        self.buttons = []
        for budget in budgets:
            button = QPushButton(f"Round to {budget:,}")
            button.setToolTip(f"Set Total timesteps to {budget:,}: {cycle}, trained exactly")
            button.clicked.connect(lambda _checked=False, n=budget: self.round_clicked.emit(n))
            self._row.insertWidget(self._row.count() - 1, button)
            self.buttons.append(button)
