"""Which runs just finished, stopped, failed, crashed or paused, and whether the queue just ended,
from one listing to the next (the Runs tab's listing, every few seconds).

Runs that had already ended when the window opened are not announced: the first listing only
sets what is known.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.run.states import ACTIVE, STALLED, TERMINAL

PAUSED = "paused"  # the thermal guard's state (issue 14): a run waiting for its GPU to cool down
GOING = (*ACTIVE, PAUSED)
QUEUE_GOING = ("running", "cancelling")


@dataclass(frozen=True)
class RunEvent:
    run_id: str
    path: Path
    event: str  # finished, stopped, failed, crashed, stalled or paused


class RunEventWatcher:
    def __init__(self) -> None:
        self.states: dict[str, str] | None = None
        self.queue_state: str | None = None

    def update(self, infos: Iterable[Any]) -> list[RunEvent]:
        """The events between the last listing and this one (``infos``: ``RunInfo``s)."""
        infos = list(infos)
        new = {i.id: i.state for i in infos}
        old, self.states = self.states, new
        if old is None:
            return []
        events = []
        for info in infos:
            before = old.get(info.id)
            if before in GOING and info.state in TERMINAL:
                events.append(RunEvent(info.id, Path(info.path), info.state))
            elif info.state in (PAUSED, STALLED) and before is not None and before != info.state:
                events.append(RunEvent(info.id, Path(info.path), info.state))
        return events

    def queue_ended(self, now: str | None) -> bool:
        """Whether the queue (its state now: ``QueueState.state``, None without one) went from running to ended
        since the last look."""
        before, self.queue_state = self.queue_state, now
        return before in QUEUE_GOING and now is not None and now not in QUEUE_GOING
