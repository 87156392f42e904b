"""The checkpoint picker of the agent's dialogs: the last checkpoint, the best one when the run keeps it, each step.

The list is read from the run folder (``core.run.checkpoints``: complete checkpoints only); its values are
what ``--checkpoint`` takes (``last``, ``best``, a step), passed on to the policy tools.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QWidget

from core.run.checkpoints import best_checkpoint, complete_checkpoints


def checkpoint_choices(run_dir: Path) -> list[tuple[str, str]]:
    """(label, value) pairs: ``last``, then ``best`` when kept, then each kept step, newest first."""
    kept = complete_checkpoints(run_dir)
    choices = [(f"last (step {kept[-1].step:,})" if kept else "last", "last")]
    best = best_checkpoint(run_dir)
    if best is not None:
        choices.append((f"best (step {best.step:,}, eval mean {best.mean_reward:.4g})", "best"))
    choices += [(f"step {c.step:,}", str(c.step)) for c in reversed(kept)]
    return choices


class CheckpointPicker(QComboBox):
    """A combo box of ``checkpoint_choices``; ``value()`` is the ``--checkpoint`` argument."""

    def __init__(self, run_dir: Path, selected: str = "last", parent: QWidget | None = None):
        super().__init__(parent)
        self.setToolTip("Which checkpoint plays: the last one saved, the best by periodic evaluation (when the run "
                        "keeps it), or any step the run keeps")
        for label, value in checkpoint_choices(run_dir):
            self.addItem(label, value)
        index = self.findData(selected)
        if index < 0 and selected not in ("", "last"):  # a step or best this run does not list: let the tool say why
            self.addItem(selected, selected)
            index = self.count() - 1
        self.setCurrentIndex(max(index, 0))

    def value(self) -> str:
        return str(self.currentData() or "last")
