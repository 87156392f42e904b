"""The coarse-to-fine search of ``rlpanel tune``: which settings train fastest here, within a time budget.

1. CPU or GPU? The user's config as it is on each device of this machine (``devices``), its own
   device first (the baseline every other row is compared with). A device it cannot run on is one
   row saying why and is never tried again; the rest of the search starts from the faster device.
   Which engine? Then the same on each other engine here (``engines``: SBX where it can run); an
   engine the config cannot use is one row saying why, and the search goes on with the faster one.
2. One torch thread instead of torch's default (an SB3 run's: SBX's networks are JAX's); then
   ``n_envs`` doubled from the user's, in a dummy and in a subprocess vec env, while each doubling
   pays (more than ``PAYS`` faster); halved when the first doubling did not.
3. The best so far on each other device and engine (more envs can turn the answer of step 1 round).
4. The algorithm's knobs one step each way around the best, a direction followed while it pays;
   then ``n_envs`` once more around the new best.

Every candidate is screened by the fit estimate first: one that does not fit is a row saying so
and is never probed. A candidate that changes what is learned is probed once for the table
(after the others, when time is left) but never followed or picked unless allowed. Probes go to
a ``ProbePool``: candidates that share a device, vec env and thread count share one child process.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from core.config.dotted import set_path
from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces, probe_spaces
from core.config.validate import validate_config
from core.estimate.device import torch_facts, worker_threads
from core.estimate.estimate import estimate
from core.estimate.gpus import GpuProfile, detected_profiles, get_profile
from core.estimate.result import MIB, NO_FIT
from core.throughput.devices import machine_line, usable_devices, user_device
from core.throughput.engines import tune_engines
from core.throughput.knobs import Settings, algo_moves, learning_changes, settings_of, with_n_envs
from core.throughput.probe import ProbePool, ProbeResult
from core.throughput.table import CANNOT_RUN, TuneResult, TuneRow, split_pcts

PAYS = 1.05          # a step is followed while it is more than 5 % faster
STARTUP_GUESS_S = 9.0  # a probe's time outside learn() with a process start (python, torch, SB3): ~8-10 s measured
REUSE_GUESS_S = 1.0    # the same in a running process (the envs, the model)
MAX_N_ENVS = 256

__all__ = ["TuneOptions", "Tuner", "Prober", "usable_devices"]


class Prober(Protocol):
    """Where the tuner's probes run (``ProbePool``); tests wrap it to see the candidates."""

    def starts_process(self, cfg: RunConfig) -> bool: ...

    def probe(self, cfg: RunConfig, seconds: float, timeout_s: float | None = None,
              cancel: threading.Event | None = None) -> ProbeResult: ...

    def close(self) -> None: ...


@dataclass
class TuneOptions:
    budget_s: float = 120.0
    allow_learning_changes: bool = False
    probe_s: float | None = None          # measured seconds per probe (default: from the budget)
    host_memory_bytes: int | None = None  # plan for a host with this much RAM (default: this one)
    devices: list[str] | None = None      # default: cpu and each CUDA device this torch can use
    engines: list[str] | None = None      # default: the config's own, and sbx where it can run (tune_engines)
    facts: dict[str, Any] | None = None   # the worker's torch facts (default: core.estimate.device.torch_facts)

    def seconds_per_probe(self) -> float:
        return self.probe_s or max(1.5, min(6.0, self.budget_s / 20))


class Tuner:
    """One tune of ``cfg``; ``run()`` returns the table and the pick. Thread-safe to ``cancel``."""

    def __init__(self, cfg: RunConfig, options: TuneOptions | None = None,
                 on_row: Callable[[int, TuneRow], None] | None = None,
                 on_progress: Callable[[float, str], None] | None = None,
                 on_machine: Callable[[str], None] | None = None,
                 prober: Prober | None = None):
        self.cfg = cfg
        self.options = options or TuneOptions()
        self.on_row, self.on_progress, self.on_machine = on_row, on_progress, on_machine
        self.prober: Prober = prober or ProbePool()  # ended by run(): its children live for one tune
        self.cancel_event = threading.Event()
        self.rows: list[TuneRow] = []
        self.machine = ""
        self._seen: dict[tuple[Any, ...], TuneRow | None] = {}
        self._overheads: dict[bool, list[float]] = {True: [], False: []}  # time outside learn(), by process start
        self._learn_times: list[float] = []  # time in learn() per probe
        self._probes = 0
        self._cannot_run: dict[str, str] = {}  # device -> why the user's config could not run on it
        self._engines: list[str] = []          # the engines tried, the config's own first; less those it cannot use
        self._device_rows: list[int] = []     # the rows of step 1, the user's config on each device
        self._out_of_budget = False
        self._skipped_for_budget = False
        self._deferred: list[Settings] = []
        self._t0 = 0.0
        self._spaces: EnvSpaces | None = None
        self._facts: dict[str, Any] = {}
        self.user: Settings = {}

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    def run(self) -> TuneResult:
        self._t0 = time.monotonic()
        try:
            self._progress("reading the env's spaces and this machine's devices")
            self._spaces = probe_spaces(self.cfg.env)
            self._facts = self.options.facts if self.options.facts is not None else torch_facts()
            devices = self.options.devices or usable_devices(self._facts)
            self.machine = machine_line(self.cfg, self._facts, devices)
            if self.on_machine:
                self.on_machine(self.machine)
            device, cannot = user_device(self.cfg, self._facts, devices)
            self.user = settings_of(self.cfg, device)
            self._engines = self.options.engines or tune_engines(self.cfg)
            self._search(devices, cannot)
            for settings in self._deferred:  # learning changes, for the table only, while time is left
                self._try(settings)
        finally:
            self.prober.close()
        stopped = ("cancelled" if self.cancel_event.is_set() else
                   "budget" if self._out_of_budget or self._skipped_for_budget else "done")
        self._progress(f"finished ({stopped})", final=True)
        baseline = next((i for i in self._device_rows if self.rows[i].steps_per_s), None)
        return TuneResult(self.rows, self._pick(), stopped=stopped, baseline=baseline, machine=self.machine)

    # --- the search -----------------------------------------------------------------------

    def _search(self, devices: list[str], cannot: str | None) -> None:
        self._devices_first(devices, cannot)
        runnable = [d for d in self._device_order(devices) if d not in self._cannot_run]
        base = self._best_settings() or ({**self.user, "runtime.device": runnable[0]} if runnable else None)
        if base is None:  # the user's config runs on no device here (each device's row says why)
            return
        base = self._engines_first(base)
        base_cfg = self.config_for(base)  # one thread, unless "auto" is one here already (the same process, the same run)
        # torch's threads: an SB3 run's network (they only hold an SBX run's buffers)
        if base_cfg is not None and base_cfg.runtime.engine == "sb3" and \
                worker_threads(base_cfg, base_cfg.runtime.device).count != 1:
            self._try({**base, "runtime.torch_threads": 1})
        base = self._best_settings() or base
        for vec in ("dummy", "subproc"):
            start = {**base, "runtime.vec_env": vec}
            if vec == "subproc" and int(start["runtime.n_envs"]) < 2:
                start = with_n_envs(start, 2)
            self._walk_n_envs(start)
        best = self._best_settings()
        for device in devices:
            if best is not None and device != best["runtime.device"] and device not in self._cannot_run:
                self._try({**best, "runtime.device": device})
        for engine in self._engines:
            if best is not None and engine != best["runtime.engine"]:
                self._try({**best, "runtime.engine": engine})
        best = self._best_settings()
        if best is None:
            return
        for settings in self._refine(best):
            best = settings
        self._walk_n_envs(best)

    def _devices_first(self, devices: list[str], cannot: str | None) -> None:
        """The user's config on each device, its own first; a device it cannot run on is one row saying why."""
        own = self.user["runtime.device"]
        if cannot is not None:  # asked for a device this machine does not have: one row, then the ones it has
            self._cannot_run[str(own)] = cannot
            key = tuple(sorted(self.user.items()))
            self._device_rows.append(len(self.rows))
            self._add(key, TuneRow(self.user, None, note=f"{CANNOT_RUN}: {cannot}"))
        for device in self._device_order(devices):
            if self.cancel_event.is_set() or self._out_of_budget:
                return
            before = len(self.rows)
            self._try({**self.user, "runtime.device": device}, first_on_device=True)
            self._device_rows.extend(range(before, len(self.rows)))

    def _engines_first(self, base: Settings) -> Settings:
        """The user's config (on the faster device) on each other engine; the best settings after them. An engine the
        config cannot use is one row naming the field (validation's words) and is not tried again."""
        for engine in self._engines[1:]:
            settings = {**base, "runtime.engine": engine}
            if self.config_for(settings) is None:
                self._engines.remove(engine)
                key = tuple(sorted(settings.items()))
                self._add(key, TuneRow(settings, None, note=f"{CANNOT_RUN} with engine {engine}: {self._refusal(settings)}"))
            elif not self.cancel_event.is_set():
                self._try(settings)
        return self._best_settings() or base

    def _refusal(self, settings: Settings) -> str:
        """Why validation refuses ``settings`` on the user's config: its first issue, naming the field and the fix."""
        raw = self.cfg.model_dump(mode="json")
        for path, value in settings.items():
            raw = set_path(raw, path, value)
        try:
            validate_config(raw)
        except ConfigError as exc:
            return str(exc.issues[0]) if exc.issues else str(exc)
        return "unknown"

    def _device_order(self, devices: list[str]) -> list[str]:
        """The user's own device first (its row is the baseline), then the others as torch lists them."""
        return sorted(devices, key=lambda d: d != self.user["runtime.device"])

    def _walk_n_envs(self, start: Settings) -> None:
        """Double n_envs while it pays; halve it when the first doubling did not."""
        speed = self._try(start)
        if speed is None:
            return
        for factor in (2, 0.5):
            current, current_speed = start, speed
            while True:
                n = int(int(current["runtime.n_envs"]) * factor)
                if n < 1 or n > MAX_N_ENVS or n == int(current["runtime.n_envs"]):
                    break
                candidate = with_n_envs(current, n)
                faster = self._pays(candidate, current_speed)
                if faster is None:
                    break
                current, current_speed = candidate, faster
            if current is not start:
                return  # doubling paid: nothing to look for below

    def _refine(self, best: Settings) -> list[Settings]:
        """Each algorithm knob one step each way, followed while it pays; the better settings found."""
        found: list[Settings] = []
        current = best
        current_speed = self._speed_of(best) or 0.0
        for direction in [name for name, _ in algo_moves(best)]:
            while True:
                moves = dict(algo_moves(current))
                candidate = moves.get(direction)
                faster = None if candidate is None else self._pays(candidate, current_speed)
                if candidate is None or faster is None:
                    break
                current, current_speed = candidate, faster
                found.append(current)
        return found

    def _pays(self, candidate: Settings, current_speed: float) -> float | None:
        """The candidate's speed when trying it paid (faster by ``PAYS``); None when it did not, or when it waits for
        the memory check (deferred)."""
        if not self._eligible(candidate):
            self._deferred.append(candidate)
            return None
        faster = self._try(candidate)
        return faster if faster is not None and faster > current_speed * PAYS else None

    # --- one candidate --------------------------------------------------------------------

    def _eligible(self, settings: Settings) -> bool:
        return self.options.allow_learning_changes or not learning_changes(settings, self.user)

    def _try(self, settings: Settings, first_on_device: bool = False) -> float | None:
        """Estimate, then probe ``settings``; its steps/s (None: refused, failed or not run).

        ``first_on_device``: the user's config on a device; when it cannot be measured (and was not
        cancelled) the device cannot run here: its row says so and no other candidate goes to it.
        """
        key = tuple(sorted(settings.items()))
        if key in self._seen:
            row = self._seen[key]
            return row.steps_per_s if row is not None else None
        device = str(settings["runtime.device"])
        if self.cancel_event.is_set() or self._out_of_budget or device in self._cannot_run:
            return None
        cfg = self.config_for(settings)
        if cfg is None:
            self._seen[key] = None
            return None
        fit = estimate(cfg, self._spaces or probe_spaces(cfg.env), self._gpu(device),
                       self.options.host_memory_bytes, suggest=False, torch=self._facts)
        changes = learning_changes(settings, self.user) if self.user else []
        if not fit.fits:
            where = "GPU" if fit.on_gpu and fit.verdict == NO_FIT else "host"
            used, cap = (fit.gpu_bytes, fit.capacity_bytes) if where == "GPU" else (fit.host_bytes, fit.host_capacity_bytes)
            note = f"not probed: the estimate says {used / MIB:,.0f} MiB of {cap / MIB:,.0f} MiB {where} memory"
            return self._add(key, TuneRow(settings, False, changes_learning=changes, note=note))
        starts = self.prober.starts_process(cfg)
        if self._probes and self.elapsed + self._expected_s(starts) > self.options.budget_s:
            if starts and self.elapsed + self._expected_s(False) <= self.options.budget_s:
                self._skipped_for_budget = True  # no time for a process start, still for probes in running ones
                return None
            self._out_of_budget = True
            return None
        self._progress(f"probing {len(self.rows) + 1}{' (starting a probe process)' if starts else ''}: "
                       + ", ".join(f"{k.rpartition('.')[2]}={v}" for k, v in settings.items()))
        result = self.probe_config(cfg, starts)
        if result.steps_per_s is None and first_on_device and not self.cancel_event.is_set():
            self._cannot_run[device] = result.error or "no figures"
            return self._add(key, TuneRow(settings, None, changes_learning=changes, note=f"{CANNOT_RUN}: {result.error}"))
        note = "" if result.error is None else result.error if result.steps_per_s else f"not measured: {result.error}"
        measured = result.steps_per_s is not None
        row = TuneRow(settings, True if measured else None, result.steps_per_s, result.host_bytes, result.gpu_bytes,
                      changes, note, *split_pcts(result.collect_s, result.train_s))
        return self._add(key, row)

    def probe_config(self, cfg: RunConfig, starts: bool) -> ProbeResult:
        """Probe ``cfg`` and learn what a probe costs here (in learn(), and outside it with and without a start)."""
        result = self.prober.probe(cfg, self.options.seconds_per_probe(), None, self.cancel_event)
        self._probes += 1
        if result.ended is None:  # a probe ended by its timeout or a cancel says nothing of the next one's time
            if result.learn_s is not None:
                self._learn_times.append(result.learn_s)
            overhead = result.overhead_s
            self._overheads[result.started_process].append(overhead if overhead is not None else result.wall_s)
        return result

    def _add(self, key: tuple[Any, ...], row: TuneRow) -> float | None:
        self._seen[key] = row
        self.rows.append(row)
        if self.on_row:
            self.on_row(len(self.rows) - 1, row)
        self._progress(f"{len(self.rows)} candidates")
        return row.steps_per_s

    def config_for(self, settings: Settings) -> RunConfig | None:
        raw = self.cfg.model_dump(mode="json")
        for path, value in settings.items():
            raw = set_path(raw, path, value)
        try:
            return validate_config(raw).config
        except ConfigError:
            return None  # a combination the algorithm's rules refuse is no candidate

    def _gpu(self, device: str) -> GpuProfile | None:
        if device == "cpu":
            return None
        index = int(device.partition(":")[2] or 0) if device.startswith("cuda") else None
        for profile in detected_profiles():
            if index is None or profile.index == index:
                return profile
        return get_profile(self.cfg.target_gpu)

    def _expected_s(self, starts: bool) -> float:
        """What the next probe will take: its time in learn() and outside it (with a process start when it needs one).

        The time in learn() is the lower median of the probes so far (the target until two ran): one candidate's
        long cycles say little of the next one's. The user's config with torch's own threads on a loaded 2-core
        machine ran 37-54 steps/s against ~600 with one thread: a 2,048-step cycle of ~50 s, after which a mean
        expected every probe to take a minute and ended a 120 s tune after its first probe.
        """
        seconds = self.options.seconds_per_probe()
        learn = statistics.median_low(self._learn_times) if len(self._learn_times) >= 2 else seconds
        warm = self._overheads[False]
        outside = statistics.fmean(warm) if warm else REUSE_GUESS_S
        if starts:
            fresh = self._overheads[True]
            outside = statistics.fmean(fresh) if fresh else STARTUP_GUESS_S
        return learn + outside

    # --- the answer -----------------------------------------------------------------------

    def _speed_of(self, settings: Settings) -> float | None:
        row = self._seen.get(tuple(sorted(settings.items())))
        return row.steps_per_s if row is not None else None

    def _pick(self) -> int | None:
        """The fastest measured row that fits and keeps learning as the user has it (unless allowed)."""
        best: int | None = None
        for i, row in enumerate(self.rows):
            if row.steps_per_s is None or row.fits is not True or not self._eligible(row.settings):
                continue
            if best is None or row.steps_per_s > (self.rows[best].steps_per_s or 0.0):
                best = i
        return best

    def _best_settings(self) -> Settings | None:
        pick = self._pick()
        return dict(self.rows[pick].settings) if pick is not None else None

    def _progress(self, text: str, final: bool = False) -> None:
        if self.on_progress:
            share = 1.0 if final else min(0.99, self.elapsed / self.options.budget_s) if self._t0 else 0.0
            self.on_progress(share, text)
