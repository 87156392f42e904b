"""Where the time of each update cycle goes: collecting, training, the rest (``cycle`` records).

SB3 does not overlap collecting and training: PPO collects a whole rollout, then trains on it; an
off-policy algorithm collects ``train_freq`` steps, then takes its gradient steps. Both bracket the
collection with ``on_rollout_start``/``on_rollout_end``, so the clock is read at those edges only
(the recorder calls ``rollout_start``/``rollout_end``), never per step: a cycle runs from one
rollout start to the next, its collection from the rollout's start to its end and its training
from the rollout's end to the next start (``train()``, or ARS's update: all that runs there). The
heavy callback work is timed ``aside`` where it happens (checkpoints, evaluations, logger dumps,
the GPU guard's pauses: rare, so a clock read each costs nothing) and taken out of the phase it
fell in: checkpoints through the checkpointer's ``timed``, logger dumps through two KVWriters around
SB3's own formats (``callbacks.logger_formats``), evaluations around the EvalCallback's step; ``other_s`` is
the cycle less the two, so the three add up to the attempt's training time (the worker's
``train_time_s``: the session starts and ends the clock around ``learn``, so the first cycle also
holds ``learn``'s set-up and the last one the final checkpoint).

Off-policy with ``train_freq`` 1 ends a cycle every step: cycles are summed into one ``cycle``
record at most every ``interval_s`` (their count ``n``), like the other records. On a CUDA run the
telemetry thread hands over the run GPU's utilisation at each sample (``gpu_sample``), and it counts
for the phase in progress then (NVML's figure is a mean over its last sample period, so a phase
edge smears it a little).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from core.run import records
from core.run.status import write_status
from core.run.time_split import TimeSplit
from core.util.jsonl import JsonlWriter

COLLECT, TRAIN, OTHER = "collect", "train", "other"
STATUS_EVERY_S = 10.0  # the totals so far into status.json (an atomic rewrite: not with every record)
F = TypeVar("F", bound=Callable[..., Any])


class CycleClock:
    """The update cycles of one attempt, written to ``out`` as ``cycle`` records; ``total`` is this attempt's split."""

    def __init__(self, out: JsonlWriter, interval_s: float = 1.0, clock: Callable[[], float] = time.perf_counter):
        self.out = out
        self.interval_s = interval_s
        self.clock = clock
        self.phase = OTHER  # read by the telemetry thread (gpu_sample)
        self.total = TimeSplit()
        self._edge: float | None = None  # where the cycle in progress began (the training's start, then each close)
        self._rollout_start: float | None = None
        self._rollout_end: float | None = None
        self._aside_s = 0.0  # heavy callback work so far (a running sum: each edge keeps its value)
        self._aside_at_start = self._aside_at_end = 0.0
        self._aside_depth = 0
        self._aside_t0 = 0.0
        self._pending = TimeSplit()  # closed cycles not written yet
        self._last_write = -math.inf
        self._gpu_lock = threading.Lock()
        self._gpu: dict[str, list[float]] = {COLLECT: [0.0, 0.0], TRAIN: [0.0, 0.0]}  # phase -> [sum %, samples]
        self.on_write: Callable[[TimeSplit], None] | None = None  # told this attempt's totals after each record

    # --- the edges (the recorder's hooks) ---------------------------------------------------------

    def training_start(self) -> None:
        self._edge = self.clock()
        self.phase = OTHER

    def rollout_start(self, step: int) -> None:
        now = self.clock()
        if self._rollout_end is not None:
            self._close(now, step)
        if self._edge is None:
            self._edge = now
        self._rollout_start, self._rollout_end = now, None
        self._aside_at_start = self._aside_s
        self.phase = COLLECT

    def rollout_end(self) -> None:
        if self._rollout_start is None:
            return
        self._rollout_end = self.clock()
        self._aside_at_end = self._aside_s
        self.phase = TRAIN

    def training_end(self, step: int) -> None:
        """Close the cycle in progress (one stopped mid-collection is all collection) and write what is pending."""
        if self._aside_depth:  # heavy work that raised out of a logger dump (a failed health check): it counts
            self._aside_depth = 1
            self.end_aside()
        now = self.clock()
        if self._rollout_start is not None:
            if self._rollout_end is None:
                self._rollout_end, self._aside_at_end = now, self._aside_s
            self._close(now, step)
            self._rollout_start = None
        self.phase = OTHER
        self.write(step)

    def _close(self, now: float, step: int) -> None:
        assert self._rollout_start is not None and self._rollout_end is not None and self._edge is not None
        collect = self._rollout_end - self._rollout_start - (self._aside_at_end - self._aside_at_start)
        train = now - self._rollout_end - (self._aside_s - self._aside_at_end)
        cycle = now - self._edge
        other = cycle - collect - train
        self._edge = now
        pending = self._pending
        pending.n += 1
        pending.collect_s += collect
        pending.train_s += train
        pending.other_s += other
        if now - self._last_write >= self.interval_s:
            self._last_write = now
            self.write(step)

    def write(self, step: int) -> None:
        """The pending cycles as one record (none pending: nothing)."""
        pending = self._pending
        if not pending.n:
            return
        with self._gpu_lock:
            gpu = {phase: (s / n if n else None) for phase, (s, n) in self._gpu.items()}
            self._gpu = {COLLECT: [0.0, 0.0], TRAIN: [0.0, 0.0]}
        rec = records.cycle(step, pending.n, pending.collect_s, pending.train_s, pending.other_s, gpu[COLLECT], gpu[TRAIN])
        self.out.write([rec])
        self.total.add_record(rec)
        self._pending = TimeSplit()
        if self.on_write is not None:
            self.on_write(self.total)

    # --- heavy work, and the GPU ----------------------------------------------------------------

    def begin_aside(self) -> None:
        """Heavy work starts (nested work counts once: an evaluation that saves the best checkpoint)."""
        if self._aside_depth == 0:
            self._aside_t0 = self.clock()
        self._aside_depth += 1

    def end_aside(self) -> None:
        self._aside_depth -= 1
        if self._aside_depth == 0:
            self._aside_s += self.clock() - self._aside_t0

    @contextmanager
    def timed_aside(self) -> Iterator[None]:
        """The block timed as the rest."""
        self.begin_aside()
        try:
            yield
        finally:
            self.end_aside()

    def aside(self, fn: F) -> F:
        """``fn`` timed as the rest."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.timed_aside():
                return fn(*args, **kwargs)

        return timed  # type: ignore[return-value]

    def gpu_sample(self, utilization_pct: float | None) -> None:
        """One telemetry sample of the run GPU (the telemetry thread): it counts for the phase in progress."""
        phase = self.phase
        if utilization_pct is None or phase == OTHER:
            return
        with self._gpu_lock:
            acc = self._gpu[phase]
            acc[0] += utilization_pct
            acc[1] += 1


def timed_evaluation(evaluation: Any, clock: CycleClock) -> None:
    """Time an ``EvalCallback``'s evaluations aside: its ``_on_step`` reads the clock only on the steps it evaluates."""
    inner = evaluation._on_step
    timed = clock.aside(inner)

    def on_step() -> bool:
        if evaluation.eval_freq > 0 and evaluation.n_calls % evaluation.eval_freq == 0:
            return bool(timed())
        return bool(inner())

    evaluation._on_step = on_step


def split_so_far(prior: TimeSplit | None, total: TimeSplit) -> TimeSplit:
    """The earlier attempts' split (``status.json``'s) and this attempt's, together."""
    split = TimeSplit()
    if prior is not None:
        split.add(prior)
    split.add(total)
    return split


def keep_in_status(clock: CycleClock, run_dir: Path, prior: TimeSplit | None, every_s: float = STATUS_EVERY_S) -> None:
    """Every ``every_s`` (at a record), the run's totals so far go to ``status.json``: a live run can say where its
    time goes without reading its records."""
    last = time.monotonic()

    def written(total: TimeSplit) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= every_s:
            last = now
            write_status(run_dir, time_split=split_so_far(prior, total).to_json())

    clock.on_write = written
