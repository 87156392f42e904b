"""The worker's services around ``learn()``, started into one ``ExitStack`` that stops them however training ends.

Each service is registered as it starts, so one that fails to start still stops those before it, and the stack
stops them in reverse: the update cycles' clock first (its last ``cycle`` record), then keep awake, the stall
watch, the GPU guard (with its events), the attempt's times into ``status.json``, telemetry, and last the
column cache, which takes what the writers before it left.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch as th
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from core.config.schema import RunConfig
from core.run.cache.writer import CacheWriter
from core.run.layout import RunDir
from core.run.status import RunStatus, read_recorded_status, write_status
from core.run.sysmem_fallback import watch_for
from core.run.time_split import TimeSplit
from core.telemetry.devices import GpuMatch
from core.telemetry.recorder import TelemetryRecorder
from core.util.awake import KeepAwake
from core.util.jsonl import JsonlWriter
from core.worker.callbacks import RunRecorder, StopFlag
from core.worker.cycle_clock import CycleClock, split_so_far
from core.worker.guarding import GuardHandler, notify_guard_event, start_guard
from core.worker.watchdog import StallWatch


@dataclass
class AttemptTimes:
    """The attempt's time in ``learn()`` (wall, CPU and the cycles' split) added to the earlier attempts'."""

    run_dir: Path
    prior: RunStatus
    cycles: CycleClock
    started: float | None = None
    cpu_started: float = 0.0

    def start(self) -> None:
        self.started, self.cpu_started = time.monotonic(), time.process_time()

    def write(self) -> None:
        """Into ``status.json``; nothing when training never started."""
        if self.started is None:
            return
        prior_split = TimeSplit.from_json(self.prior.time_split)
        write_status(self.run_dir, train_time_s=(self.prior.train_time_s or 0.0) + time.monotonic() - self.started,
                     train_cpu_s=(self.prior.train_cpu_s or 0.0) + time.process_time() - self.cpu_started,
                     time_split=split_so_far(prior_split, self.cycles.total).to_json())


@dataclass
class Worker:
    """What the services watch: the run, its model and env, and the recorder that carries its stop."""

    run_dir: Path
    cfg: RunConfig
    device: str  # the device it trains on (``TrainingSession.device``)
    out: JsonlWriter
    model: BaseAlgorithm
    env: VecEnv
    recorder: RunRecorder
    event: Callable[[str, str], None]  # an event (message, level) in the run's records

    @property
    def stop(self) -> StopFlag:
        return self.recorder.stop

    def step(self) -> int:
        return self.model.num_timesteps


def start_services(stack: ExitStack, w: Worker, where: GpuMatch | None, times: AttemptTimes) -> None:
    """Start the services, each registered on ``stack`` to stop (see the module's docstring for the order)."""
    stack.callback(CacheWriter(w.run_dir).start().stop)  # the window opens the run from columns, the first time too
    cuda = w.device.startswith("cuda")
    telemetry = start_telemetry(w.run_dir, w.cfg, where.gpu if where is not None else None,
                                on_run_gpu=times.cycles.gpu_sample if cuda else None)
    if telemetry is not None:
        stack.callback(telemetry.stop)
    stack.callback(times.write)
    guard, note = start_guard(w.cfg, where)
    w.event(note, "info")
    handler = None
    if guard is not None:
        handler = GuardHandler(w.run_dir, guard, w.out, w.stop.check, w.step, w.recorder.flush,
                               notify=partial(notify_guard_event, w.run_dir), fallback=watch_for())
        w.recorder.on_second = handler
        stack.callback(handler.write_events)
        stack.callback(guard.stop)
    rt = w.cfg.runtime
    watch = StallWatch(w.run_dir, w.out, w.recorder, w.step, configured=rt.stall_after_s, action=rt.on_stall,
                       env=w.env, ask_stop=w.stop.set,
                       paused=lambda: handler is not None and handler.guard.paused).start()
    stack.callback(watch.stop)
    awake = KeepAwake(f"rlpanel run {w.run_dir.name}", rt.keep_awake).start()
    stack.callback(awake.release)
    awake_note(w, awake)


def awake_note(w: Worker, awake: KeepAwake) -> None:
    """Keep awake's note: a failure is warned once per run (status ``keep_awake_warned``), not on each attempt;
    another failure is warned again."""
    if awake.active:
        w.event(awake.note, "info")
        return
    if read_recorded_status(w.run_dir).keep_awake_warned == awake.note:
        return  # an earlier attempt of this run said it
    write_status(w.run_dir, keep_awake_warned=awake.note)
    w.event(awake.note, "warning")


def start_telemetry(run_dir: Path, cfg: RunConfig, gpu: int | None,
                    on_run_gpu: Callable[[float | None], None] | None = None) -> TelemetryRecorder | None:
    """The recorder, told the run's GPU by NVML index (its memory figure, and the energy counts only it)."""
    hz = cfg.runtime.telemetry_hz
    if not hz:
        return None
    # an SBX run's torch never touches CUDA (JAX's memory is the process's, on NVML)
    sb3_cuda = cfg.runtime.engine == "sb3" and th.cuda.is_available()
    torch_memory = (lambda: th.cuda.memory_reserved()) if sb3_cuda else None
    recorder = TelemetryRecorder(RunDir(run_dir).telemetry, hz, root_pid=os.getpid(), torch_memory=torch_memory,
                                 run_gpu=gpu, on_run_gpu=on_run_gpu)
    recorder.start()
    return recorder
