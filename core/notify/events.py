"""The events a notification can be about, in the words the settings use."""

from __future__ import annotations

RUN_ENDS = ("finished", "stopped", "failed", "crashed")  # how a run's attempt ends
EVENTS = (*RUN_ENDS, "stalled", "paused", "warning", "queue_end")
EVENT_TITLES = {"finished": "finished", "stopped": "stopped", "failed": "failed", "crashed": "crashed",
                "stalled": "stalled", "paused": "paused", "warning": "warning", "queue_end": "queue ended"}
