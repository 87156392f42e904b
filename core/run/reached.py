"""How far a run got, and how it goes on by hand: the words of a crash or a stop that the user acts on.

The step a run reached is the later of its records' newest step and its newest complete checkpoint's. Records come
at most once a second (episodes at their end, a progress record each second); a checkpoint first flushes the
episodes it covers but adds no progress record, and a killed worker loses the records of its last second. So a run
killed just after a checkpoint has records that end before it: issue 42's "killed at step 49,997; it resumes from
the checkpoint at step 50,000". The run did reach the checkpoint's step, which is what a resume starts from.
"""

from __future__ import annotations

from pathlib import Path

from core.run.checkpoints import find_checkpoint
from core.run.layout import RunDir
from core.run.records import STEP_KINDS, well_formed_only
from core.util.jsonl import tail_jsonl


def records_step(run_dir: Path) -> int:
    """The newest step the run's records reached (their tail only: cheap on a long run)."""
    steps = [int(r.get("step", 0)) for r in well_formed_only(tail_jsonl(RunDir(run_dir).metrics))
             if r.get("kind") in STEP_KINDS]
    return max(steps, default=0)


def checkpoint_step(run_dir: Path) -> int | None:
    """The step of the newest complete checkpoint: where a resume starts (None: there is none)."""
    ckpt = find_checkpoint(run_dir).checkpoint
    return ckpt.step if ckpt is not None else None


def step_reached(run_dir: Path) -> int:
    """The furthest step the run is known to have reached: its records' or its newest checkpoint's, the later."""
    return max(records_step(run_dir), checkpoint_step(run_dir) or 0)


def resume_by_hand(run_dir: Path) -> str:
    """What the user does to go on, for a run nothing resumes by itself: the resume command and the checkpoint it
    starts from, or, without a checkpoint, the restart command."""
    run_id = Path(run_dir).name
    step = checkpoint_step(run_dir)
    if step is None:
        return f"it has no checkpoint to resume from: restart it with `rlpanel restart {run_id}`"
    return f"resume it with `rlpanel resume {run_id}` (from its checkpoint at step {step:,})"
