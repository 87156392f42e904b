"""What the sync tests share: a copy of the session's trained run and its records counted as a reader would."""

from __future__ import annotations

from pathlib import Path

from core.run.layout import RunDir
from core.util.jsonl import read_jsonl


def reward_records(run_dir: Path) -> int:
    """How many records of metrics.jsonl carry an episode reward (an episode, or an aggregate of many)."""
    return sum(1 for r in read_jsonl(RunDir(run_dir).metrics) if r.get("kind") in ("episode", "episodes"))
