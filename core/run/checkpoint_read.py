"""A checkpoint's files read whole while the trainer that wrote them may be pruning them.

A run still training keeps its newest ``keep_checkpoints`` checkpoints and removes older ones as it saves
(``core.worker.checkpoints``). With ``keep_checkpoints: 1`` and a checkpoint every 128 steps, the checkpoint an
evaluation had chosen was gone half the time before the env was built and its statistics opened (issue 44:
"[Errno 2] No such file ...step_..._vecnormalize.pkl"). A pin the pruner honours would have to outlive readers that
die holding it; instead the files are read into memory at once after the choice, and a file gone meanwhile means
the choice is made again (for ``last``: the newest complete one by then), up to ``TRIES`` times. Step files are
renamed into place under names of their own step and never rewritten, so files read whole belong together;
``best`` is replaced in place, so its files count only when best.json names the same checkpoint after the read.
For a moment between a save and its prune a reader may list no complete checkpoint at all (the new one's manifest
not yet seen, the old one's files gone): the choice is then made again after a short pause.
A file being deleted on Windows cannot be opened (PermissionError) for a moment: it counts as gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.run.checkpoints import BestCheckpoint, Checkpoint, select_checkpoint

TRIES = 5
RETRY_S = 0.05  # the pause before choosing again when no complete checkpoint was found (0.5 s in all at most)
PLAYED_PARTS = ("model", "vecnormalize")  # what playing a checkpoint needs (never the replay buffer)


@dataclass(frozen=True)
class CheckpointFiles:
    """A checkpoint and the content of its files, by part (``model``, ``vecnormalize``), as read in one go."""

    checkpoint: Checkpoint
    files: dict[str, bytes]


def read_checkpoint(run_dir: Path, which: str = "last", parts: tuple[str, ...] = PLAYED_PARTS,
                    select: Callable[[Path, str], Checkpoint] = select_checkpoint) -> CheckpointFiles:
    """The checkpoint ``which`` of ``run_dir`` (``select_checkpoint``'s words) with ``parts`` read into memory.

    Raises ``LookupError``: the run keeps no such checkpoint, or each one chosen was removed before it was read.
    """
    run_dir = Path(run_dir)
    gone: list[str] = []
    for attempt in range(TRIES):
        try:
            checkpoint = select(run_dir, which)
        except LookupError:
            # a trainer that just pruned the only complete one (keep_checkpoints: 1) while its newer one was being
            # listed: no complete checkpoint for a moment. Chosen again shortly; a run that has none says so as before
            if attempt == TRIES - 1:
                raise
            time.sleep(RETRY_S * (attempt + 1))
            continue
        try:
            files = {part: path.read_bytes() for part in parts if (path := checkpoint.path(run_dir, part)) is not None}
        except (FileNotFoundError, PermissionError) as exc:  # pruned (or being deleted) since it was chosen
            gone.append(f"{Path(str(exc.filename or '')).name or 'a file'} ({exc.strerror or exc})")
            continue
        if isinstance(checkpoint, BestCheckpoint) and not _same_best(run_dir, which, checkpoint, select):
            gone.append("best.zip (a new best checkpoint replaced it while it was read)")
            continue
        return CheckpointFiles(checkpoint, files)
    raise LookupError(f"run {run_dir.name}: the checkpoint chosen was removed before it could be read, {TRIES} times "
                      f"(last: {gone[-1]}); the run prunes its checkpoints faster than they are read: name a step it "
                      "keeps longer, or raise budget.keep_checkpoints")


def _same_best(run_dir: Path, which: str, read: Checkpoint, select: Callable[[Path, str], Checkpoint]) -> bool:
    try:
        now = select(run_dir, which)
    except LookupError:  # best.json is rewritten last: between its removal and its new version there is none
        return False
    return (now.step, now.files) == (read.step, read.files)
