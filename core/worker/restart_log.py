"""``EnvRestartLog``: the worker's record of env processes replaced mid-run (``LeanSubprocVecEnv``'s ``on_replaced``).

Each replacement (a step past ``env.step_timeout_s``, or the envs restarted on request) becomes a warning
event naming the env, the step and the reason, and ``env_restarts`` in status.json counts them over the
run's attempts. Replacements that come often mean the env or its simulator is failing rather than
hiccuping: more than ``ALERT_COUNT`` within ``ALERT_WINDOW_S`` send one warning notification, from a
thread (training never waits on the network), as the GPU guard's do (``core.worker.guarding``).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.notify.run_events import notify_run_event
from core.run import records
from core.run.status import write_status
from core.util.jsonl import JsonlWriter

ALERT_COUNT = 3  # more replacements than this ...
ALERT_WINDOW_S = 600.0  # ... within ten minutes: one notification
EVENT_CODE = "env_restart"  # the event record's code, for a program that acts on it


class EnvRestartLog:
    """Called as ``on_replaced(index, reason)`` in the training thread; ``step`` gives the model's step once it exists."""

    def __init__(self, run_dir: Path, out: JsonlWriter, count: int = 0,
                 notify: Callable[..., Any] = notify_run_event, clock: Callable[[], float] = time.monotonic) -> None:
        self.run_dir = run_dir
        self.out = out
        self.count = count  # over the run's attempts: status.json's env_restarts
        self.notify = notify
        self.clock = clock
        self.step: Callable[[], int] = lambda: 0
        self._recent: deque[float] = deque()
        self.alerted = False

    def __call__(self, index: int, reason: str) -> None:
        self.count += 1
        step = self.step()
        write_status(self.run_dir, env_restarts=self.count)
        message = f"env {index} replaced at step {step:,}: {reason}"
        self.out.write([records.event(message, "warning", step=step, code=EVENT_CODE)])
        print(records.event_echo("warning", message), flush=True)
        now = self.clock()
        self._recent.append(now)
        while self._recent and now - self._recent[0] > ALERT_WINDOW_S:
            self._recent.popleft()
        if len(self._recent) > ALERT_COUNT and not self.alerted:
            self.alerted = True
            self.notify(self.run_dir, "warning",
                        f"{len(self._recent)} env processes replaced within {ALERT_WINDOW_S / 60:g} minutes (the last: "
                        f"{message}); the env or what it calls may be failing", in_background=True)
