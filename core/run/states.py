"""The states a run passes through, and which of them mean what.

queued -> starting -> running -> (stopping ->) finished | stopped | failed; a running run may be
``paused`` by a guard of the worker (the GPU too hot: ``pause_reason`` in the status says why) and
goes back to running. ``crashed`` is never
written: it is what a reader sees when the status says active but the worker is gone; nor is
``stalled``: a running run whose worker is alive but takes no step (its watchdog said so, or its
records stopped for twice the stall limit: ``core.run.status.read_status``); nor is ``broken``:
what a reader sees when ``status.json`` is not a status at all.
"""

from __future__ import annotations

BROKEN = "broken"  # a reading, never written: status.json cannot be read as a status (why: "broken")
STALLED = "stalled"  # a reading, never written: running, the worker alive, no step for longer than the stall limit
ACTIVE = ("queued", "starting", "running", "paused", "stopping", STALLED)
LIVE = ("starting", "running", "paused", "stopping", STALLED)  # a worker should be running
TERMINAL = ("finished", "stopped", "failed", "crashed")
RESUMABLE = ("stopped", "failed", "crashed")
FAILED = ("failed", "crashed")
STARTING_GRACE_S = 120.0  # a run "starting" with no worker pid after this long never started
