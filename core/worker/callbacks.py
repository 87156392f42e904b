"""SB3 callbacks and logger output that write the run folder's records.

The per-step cost is a look at ``dones``, the health check's sum of the rewards, one monotonic clock read and
the watchdog's beat (``RunRecorder.beat``, ``longest_gap``): ~2.6 us a step of 8 envs for the recorder (it was ~10-24
with ``ndarray.any()`` and a check per reward), ~7 us with SB3's ``CallbackList`` around it; everything else
(episode records, progress, the STOP check) happens about once a second. The update cycles' time
split (``core.worker.cycle_clock``) reads the clock at the rollouts' edges only.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback, EvalCallback
from stable_baselines3.common.logger import KVWriter

from core.run import records
from core.run.episodes import EpisodeLimiter
from core.run.layout import RunDir
from core.util.jsonl import JsonlWriter
from core.worker.checkpoints import Checkpointer
from core.worker.cycle_clock import CycleClock
from core.worker.env_replacement import TRUNCATED_KEY
from core.worker.health import TrainingHealth


class StopFlag:
    """Set by the STOP file or by SIGTERM; read by the recorder once a second."""

    def __init__(self, run_dir: Path):
        self.stop_file = RunDir(run_dir).stop_request
        self._event = threading.Event()
        self.reason = ""

    def install_signal_handler(self) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda *_: self.set("SIGTERM"))

    def set(self, reason: str) -> None:
        self.reason = self.reason or reason
        self._event.set()

    def check(self) -> bool:
        if not self._event.is_set() and self.stop_file.exists():
            self.set("STOP file")
        return self._event.is_set()


class _AsideEdge(KVWriter):
    """One edge of a logger dump: SB3's ``Logger.dump`` calls its formats in order, so a writer before them and one
    after them time the dump aside, with no method of the logger replaced."""

    def __init__(self, edge: Callable[[], None]):
        self.edge = edge

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        self.edge()

    def close(self) -> None:
        pass


def logger_formats(clock: CycleClock, formats: list[Any]) -> list[Any]:
    """The logger's output formats with its dumps timed aside on ``clock``."""
    return [_AsideEdge(clock.begin_aside), *formats, _AsideEdge(clock.end_aside)]


class MetricsWriter(KVWriter):
    """SB3 logger output: a ``logger.dump(step)`` becomes a ``train`` record, at most one per
    ``interval_s``; every dump gets a health check.

    An off-policy algorithm dumps after every episode (``log_interval=1``): with short episodes that
    was a record of ~400 bytes per episode, most of ``metrics.jsonl``. A dump sooner than
    ``interval_s`` after the last record is merged into the next one (SB3's values are the newest of
    each key, so the merged record holds what the last dump said, at its step); ``flush`` writes it.
    """

    def __init__(self, out: JsonlWriter, health: TrainingHealth | None = None, interval_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic):
        self.out = out
        self.health = health
        self.interval_s = interval_s
        self.clock = clock
        self._last = -math.inf
        self._pending: dict[str, float | None] = {}
        self._pending_step: int | None = None

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        raw = numbers(key_values)
        self._pending.update({k: v if math.isfinite(v) else None for k, v in raw.items()})
        self._pending_step = step
        now = self.clock()
        if now - self._last >= self.interval_s:
            self.flush(now)
        if self.health is not None:
            self.health.check(step, raw)

    def flush(self, now: float | None = None) -> None:
        """Write the merged dumps not written yet (before a checkpoint and at the end of training)."""
        if self._pending_step is None:
            return
        self.out.write([records.train(self._pending_step, self._pending)])
        self._pending, self._pending_step = {}, None
        self._last = self.clock() if now is None else now

    def close(self) -> None:
        self.flush()


def numbers(key_values: dict[str, Any]) -> dict[str, float]:
    """The numeric values of a logger dump, as floats (NaN and inf kept: the health check wants them)."""
    return {key: float(value) for key, value in key_values.items()
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)}


class TrainingHalted(Exception):
    """Raised out of ``learn`` to stop an algorithm that does not stop when a callback returns False."""


class RunRecorder(BaseCallback):
    """Episode records from the Monitor infos (aggregated past ``EpisodeLimiter``'s rate), a progress
    record at most once per ``interval_s`` (and the last one), and the STOP and health checks."""

    def __init__(self, out: JsonlWriter, stop: StopFlag, total: int, interval_s: float = 1.0,
                 health: TrainingHealth | None = None, on_second: Callable[[], bool] | None = None,
                 info_keys: tuple[str, ...] = ()):
        super().__init__()
        self.info_keys = info_keys  # the env's own measures to keep with each episode (env.info_keys)
        self.on_second = on_second  # the GPU guard's turn (core.worker.guarding): True ends training
        self.out = out
        self.stop = stop
        self.total = total
        self.interval_s = interval_s
        self.health = health
        self._pending: list[dict[str, Any]] = []
        self.limiter = EpisodeLimiter()
        self._next_flush = 0.0
        self._last_progress = -math.inf
        self._next_stop_check = 0.0  # its own clock: checkpoint flushes (every few hundred steps) must not postpone it
        self._last_t = 0.0
        self._last_step = 0
        self.beat = time.monotonic()  # the last step (core.worker.watchdog reads it from its thread)
        self.longest_gap = 0.0  # the longest pause between two steps so far (an update, an evaluation, a checkpoint)
        self.stopped = False
        self.ignores_false = False  # the algorithm does not end learn() when a step returns False (ARS)
        self.cycles: CycleClock | None = None  # where each update cycle's time goes (read at the rollouts' edges)

    def _on_training_start(self) -> None:
        self._last_t = self.beat = time.monotonic()
        self._last_step = self.num_timesteps
        self._next_flush = self._next_stop_check = self._last_t + self.interval_s

    def _on_step(self) -> bool:
        dones = self.locals.get("dones")
        if dones is None:  # ARS steps its callback without locals: its episodes come at the end of each rollout
            self.ignores_false = True
        elif np.count_nonzero(dones):  # ~0.9 us for 8 envs; ndarray.any() takes ~3
            infos = self.locals["infos"]
            now = time.time()
            for i in np.flatnonzero(dones):
                ep = infos[i].get("episode")
                if ep is not None:  # an episode cut short by a replaced env process says why (TRUNCATED_KEY)
                    self._pending.append(records.episode(self.num_timesteps, ep["r"], ep["l"], now,
                                                         records.measures_of(ep, self.info_keys),
                                                         infos[i].get(TRUNCATED_KEY)))
        rewards = self.locals.get("rewards")
        if self.health is not None and rewards is not None:
            self.health.check_rewards(self.num_timesteps, np.asarray(rewards).ravel().tolist())
        if self.health is not None and self.health.failure:
            self.flush()
            return self.halt()  # diverged: end now, before another update or checkpoint
        now = time.monotonic()
        if now - self.beat > self.longest_gap:  # the watchdog's measure of this run's normal pauses
            self.longest_gap = now - self.beat
        self.beat = now
        if now >= self._next_flush:
            self.flush(now)
        if now >= self._next_stop_check:
            self._next_stop_check = now + self.interval_s
            if self.stop.check() or (self.on_second is not None and self._guard_stops()):
                self.stopped = True
                return self.halt()
        return True

    def halt(self) -> bool:
        """End ``learn``: False, or ``TrainingHalted`` for an algorithm that ignores False (ARS; its weights change
        only between rollouts, so the model is whole when it is raised)."""
        if self.ignores_false:
            raise TrainingHalted()
        return False

    def _on_rollout_start(self) -> None:
        if self.cycles is not None:
            self.cycles.rollout_start(self.num_timesteps)

    def _on_rollout_end(self) -> None:
        if self.cycles is not None:
            self.cycles.rollout_end()
        if not self.ignores_false:
            return
        now = time.time()  # ARS's episodes of this rollout, which it keeps as Monitor infos
        for ep in getattr(self.model, "ep_info_buffer", None) or ():
            self._pending.append(records.episode(self.num_timesteps, ep["r"], ep["l"], now))

    def _guard_stops(self) -> bool:
        """The guard's turn; after a pause the progress clock starts again (the pause is no slow step)."""
        paused_before = getattr(self.on_second, "pauses", 0)
        turn = self.on_second
        if turn is not None and self.cycles is not None:
            turn = self.cycles.aside(turn)  # a thermal pause is time neither collecting nor training
        stop = turn() if turn is not None else False
        if getattr(self.on_second, "pauses", 0) != paused_before:
            self._last_t = self.beat = time.monotonic()  # the pause is no pause between steps for the watchdog
            self._last_step = self.num_timesteps
            self._next_flush = self._next_stop_check = self._last_t + self.interval_s
        return stop

    def flush(self, now: float | None = None, last: bool = False) -> None:
        """Write the buffered episodes (also before each checkpoint), and a progress record if the last
        one is ``interval_s`` old or this is the ``last`` flush (a checkpoint every few steps adds none)."""
        now = time.monotonic() if now is None else now
        out = self.limiter.take(self._pending, now) if self._pending else []
        self._pending = []
        if last or now - self._last_progress >= self.interval_s * 0.999:
            dt = now - self._last_t
            fps = (self.num_timesteps - self._last_step) / dt if dt > 0 else 0.0
            out.append(records.progress(self.num_timesteps, fps, self.total))
            self._last_t, self._last_step, self._last_progress = now, self.num_timesteps, now
            self._next_flush = now + self.interval_s  # a checkpoint's flush between two does not postpone the next
        self.out.write(out)

    def _on_training_end(self) -> None:
        self.flush(last=True)


class CheckpointEvery(BaseCallback):
    """Saves a checkpoint every ``every`` steps (0: never by steps) and ``minutes`` after the last one
    (0: never by time) through the run's ``Checkpointer``."""

    def __init__(self, checkpointer: Checkpointer, every: int, minutes: float = 0.0):
        super().__init__()
        self.checkpointer = checkpointer
        self.every = every
        self.period_s = minutes * 60.0
        self._next_at: float = 0
        self._due = math.inf

    def _on_training_start(self) -> None:
        self._next_at = (self.num_timesteps // self.every + 1) * self.every if self.every else math.inf
        self._due = time.monotonic() + self.period_s if self.period_s else math.inf

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next_at or (self.period_s and time.monotonic() >= self._due):
            self.checkpointer.save(self.model)
            if self.every:
                self._next_at = (self.num_timesteps // self.every + 1) * self.every
            if self.period_s:
                self._due = time.monotonic() + self.period_s
        return True


class EvalRecorder(BaseCallback):
    """Called by SB3's ``EvalCallback`` after each evaluation: writes an ``eval`` record, then seeds the eval env
    again with ``seed`` (when given), so every evaluation plays the same episodes: evaluations compare models, not
    episodes, and the best one can be played again exactly (``best.json`` keeps the seed)."""

    def __init__(self, out: JsonlWriter, seed: int | None = None):
        super().__init__()
        self.out = out
        self.seed = seed

    def _on_step(self) -> bool:
        parent = self.parent
        assert isinstance(parent, EvalCallback), "EvalRecorder runs as an EvalCallback's callback_after_eval"
        rewards = parent.evaluations_results[-1] if parent.evaluations_results else [parent.last_mean_reward]
        mean, std = float(np.mean(rewards)), float(np.std(rewards))
        self.out.write([records.evaluation(self.num_timesteps, mean, std, len(rewards))])
        if self.seed is not None:  # used by the next reset, the one that starts the next evaluation
            parent.eval_env.seed(self.seed)
        return True
