"""The checkpoint picker of the agent's dialogs: the last checkpoint, the best one when the run keeps it, each step.

The list is read from the run folder (``core.run.checkpoints``: complete checkpoints only); its values are
what ``--checkpoint`` takes (``last``, ``best``, a step), passed on to the policy tools.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QWidget

from core.run.checkpoints import best_checkpoint, complete_checkpoints


def checkpoint_choices(run_dir: Path) -> list[tuple[str, str, int]]:
    """(label, ``--checkpoint`` value, step) of what the run keeps: ``last``, then ``best`` when kept, then each
    older step, newest first (none before the first checkpoint)."""
    kept = complete_checkpoints(run_dir)
    if not kept:
        return []
    choices = [(f"last (step {kept[-1].step:,})", "last", kept[-1].step)]
    best = best_checkpoint(run_dir)
    if best is not None:
        choices.append((f"best (step {best.step:,}, eval mean {best.mean_reward:.4g})", "best", best.step))
    return choices + [(f"step {c.step:,}", str(c.step), c.step) for c in reversed(kept[:-1])]


class CheckpointPicker(QComboBox):
    """A combo box of ``checkpoint_choices``: ``value()`` is the ``--checkpoint`` argument, ``step()`` its step.
    Evaluate..., Export policy..., Watch and Record... all pick with it."""

    def __init__(self, run_dir: Path, selected: str = "last", parent: QWidget | None = None):
        super().__init__(parent)
        self.setToolTip("Which checkpoint plays: the last one saved, the best by periodic evaluation (when the run "
                        "keeps it), or any step the run keeps")
        self._steps: dict[str, int | None] = {}
        for label, value, step in checkpoint_choices(run_dir):
            self.addItem(label, value)
            self._steps[value] = step
        index = self.findData(selected)
        if index < 0 and selected not in ("", "last"):  # a step or best this run does not list: let the tool say why
            self.addItem(selected, selected)
            index = self.count() - 1
        self.setCurrentIndex(max(index, 0))

    def value(self) -> str:
        return str(self.currentData() or "last")

    def step(self) -> int | None:
        """The chosen checkpoint's step (None for one the run does not list)."""
        return self._steps.get(self.value())
