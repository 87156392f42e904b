"""The coarse-to-fine search of ``rlpanel tune``: which settings train fastest here, within a time budget.

1. The user's config as it is (the baseline every other row is compared with).
2. One torch thread instead of torch's default; then ``n_envs`` doubled from the user's, in a
   dummy and in a subprocess vec env, while each doubling pays (more than ``PAYS`` faster);
   halved when the first doubling did not.
3. The best so far on each other device (each CUDA device torch can use).
4. The algorithm's knobs one step each way around the best, a direction followed while it pays;
   then ``n_envs`` once more around the new best.

Every candidate is screened by the fit estimate first: one that does not fit is a row saying so
and is never probed. A candidate that changes what is learned is probed once for the table
(after the others, when time is left) but never followed or picked unless allowed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.config.dotted import set_path
from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces, probe_spaces
from core.config.validate import validate_config
from core.fit.device import torch_facts
from core.fit.estimate import estimate
from core.fit.gpus import GpuProfile, detected_profiles, get_profile
from core.fit.result import MIB, NO_FIT
from core.tune.knobs import Settings, algo_moves, learning_changes, settings_of, with_n_envs
from core.tune.probe import ProbeResult, run_probe
from core.tune.table import TuneResult, TuneRow

PAYS = 1.05          # a step is followed while it is more than 5 % faster
STARTUP_GUESS_S = 8.0  # a probe's start (torch, the envs) before the first one says
MAX_N_ENVS = 256

Probe = Callable[[RunConfig, float, float | None, threading.Event | None], ProbeResult]


@dataclass
class TuneOptions:
    budget_s: float = 120.0
    allow_learning_changes: bool = False
    probe_s: float | None = None          # measured seconds per probe (default: from the budget)
    host_memory_bytes: int | None = None  # plan for a host with this much RAM (default: this one)
    devices: list[str] | None = None      # default: cpu and each CUDA device this torch can use

    def seconds_per_probe(self) -> float:
        return self.probe_s or max(1.5, min(6.0, self.budget_s / 20))


def usable_devices(facts: dict[str, Any]) -> list[str]:
    """``cpu`` and each CUDA device the worker's torch can use."""
    cuda = facts.get("devices") or [] if facts.get("cuda_available") else []
    return ["cpu"] + [f"cuda:{d.get('index', i)}" for i, d in enumerate(cuda)]


class Tuner:
    """One tune of ``cfg``; ``run()`` returns the table and the pick. Thread-safe to ``cancel``."""

    def __init__(self, cfg: RunConfig, options: TuneOptions | None = None,
                 on_row: Callable[[int, TuneRow], None] | None = None,
                 on_progress: Callable[[float, str], None] | None = None,
                 probe: Probe = run_probe):
        self.cfg = cfg
        self.options = options or TuneOptions()
        self.on_row, self.on_progress, self.probe = on_row, on_progress, probe
        self.cancel_event = threading.Event()
        self.rows: list[TuneRow] = []
        self._seen: dict[tuple[Any, ...], TuneRow | None] = {}
        self._walls: list[float] = []
        self._out_of_budget = False
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
        self._progress("reading the env's spaces and this machine's devices")
        self._spaces = probe_spaces(self.cfg.env)
        self._facts = torch_facts()
        devices = self.options.devices or usable_devices(self._facts)
        first = estimate(self.cfg, self._spaces, self._gpu(self.cfg.runtime.device), self.options.host_memory_bytes,
                         suggest=False, torch=self._facts)
        self.user = settings_of(self.cfg, first.train_device or "cpu")
        self._search(devices)
        for settings in self._deferred:  # learning changes, for the table only, while time is left
            self._try(settings)
        stopped = "cancelled" if self.cancel_event.is_set() else "budget" if self._out_of_budget else "done"
        self._progress(f"finished ({stopped})", final=True)
        return TuneResult(self.rows, self._pick(), stopped=stopped)

    # --- the search -----------------------------------------------------------------------

    def _search(self, devices: list[str]) -> None:
        self._try(self.user)
        if self.user.get("runtime.torch_threads") != 1:  # torch's own threads fight the envs' on a busy CPU
            self._try({**self.user, "runtime.torch_threads": 1})
        base = self._best_settings() or self.user
        for vec in ("dummy", "subproc"):
            start = {**base, "runtime.vec_env": vec}
            if vec == "subproc" and int(start["runtime.n_envs"]) < 2:
                start = with_n_envs(start, 2)
            self._walk_n_envs(start)
        best = self._best_settings()
        for device in devices:
            if best is not None and device != best["runtime.device"]:
                self._try({**best, "runtime.device": device})
        best = self._best_settings()
        if best is None:
            return
        for settings in self._refine(best):
            best = settings
        self._walk_n_envs(best)

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
                if not self._eligible(candidate):
                    self._deferred.append(candidate)
                    break
                faster = self._try(candidate)
                if faster is None or faster <= current_speed * PAYS:
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
                if candidate is None:
                    break
                if not self._eligible(candidate):
                    self._deferred.append(candidate)
                    break
                faster = self._try(candidate)
                if faster is None or faster <= current_speed * PAYS:
                    break
                current, current_speed = candidate, faster
                found.append(current)
        return found

    # --- one candidate --------------------------------------------------------------------

    def _eligible(self, settings: Settings) -> bool:
        return self.options.allow_learning_changes or not learning_changes(settings, self.user)

    def _try(self, settings: Settings) -> float | None:
        """Estimate, then probe ``settings``; its steps/s (None: refused, failed or not run)."""
        key = tuple(sorted(settings.items()))
        if key in self._seen:
            row = self._seen[key]
            return row.steps_per_s if row is not None else None
        if self.cancel_event.is_set() or self._out_of_budget:
            return None
        cfg = self.config_for(settings)
        if cfg is None:
            self._seen[key] = None
            return None
        fit = estimate(cfg, self._spaces or probe_spaces(cfg.env), self._gpu(str(settings["runtime.device"])),
                       self.options.host_memory_bytes, suggest=False, torch=self._facts)
        changes = learning_changes(settings, self.user) if self.user else []
        if not fit.fits:
            where = "GPU" if fit.on_gpu and fit.verdict == NO_FIT else "host"
            used, cap = (fit.gpu_bytes, fit.capacity_bytes) if where == "GPU" else (fit.host_bytes, fit.host_capacity_bytes)
            note = f"not probed: the estimate says {used / MIB:,.0f} MiB of {cap / MIB:,.0f} MiB {where} memory"
            return self._add(key, TuneRow(settings, False, changes_learning=changes, note=note))
        expected = self.options.seconds_per_probe() + self._startup_s()
        if self._walls and self.elapsed + expected > self.options.budget_s:
            self._out_of_budget = True
            return None
        self._progress(f"probing {len(self.rows) + 1}: " + ", ".join(f"{k.rpartition('.')[2]}={v}" for k, v in settings.items()))
        result = self.probe(cfg, self.options.seconds_per_probe(), None, self.cancel_event)
        self._walls.append(result.wall_s)
        note = "" if result.error is None else result.error if result.steps_per_s else f"not measured: {result.error}"
        row = TuneRow(settings, True, result.steps_per_s, result.host_bytes, result.gpu_bytes, changes, note)
        return self._add(key, row)

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

    def _startup_s(self) -> float:
        if not self._walls:
            return STARTUP_GUESS_S
        return max(0.0, sum(self._walls) / len(self._walls) - self.options.seconds_per_probe())

    # --- the answer -----------------------------------------------------------------------

    def _speed_of(self, settings: Settings) -> float | None:
        row = self._seen.get(tuple(sorted(settings.items())))
        return row.steps_per_s if row is not None else None

    def _pick(self) -> int | None:
        """The fastest measured row that fits and keeps learning as the user has it (unless allowed)."""
        best: int | None = None
        for i, row in enumerate(self.rows):
            if row.steps_per_s is None or not row.fits or not self._eligible(row.settings):
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
