"""The panel's link to ``core.estimate`` (estimate, GPU profiles) and ``core.config.spaces``.

Env spaces are probed once per env in the background (an entry point runs in a subprocess
there; a gymnasium id is created in that thread), so the GUI thread never waits.
The estimate itself is pure arithmetic and runs on the GUI thread.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from shiboken6 import isValid

from app.threads.background import run_in_background, wait_for_background
from core.config.errors import ConfigError

if TYPE_CHECKING:  # the estimate's modules (psutil, the families' arithmetic) load at the first estimate, after the first
    # frame; the GPU profiles (NVML, the calibration) and the own network's measurement too, when first asked for; the
    # schema (pydantic) with the first validation
    from core.config.schema import EnvSpec, RunConfig
    from core.config.spaces import EnvSpaces
    from core.estimate.gpus import GpuProfile
    from core.estimate.measured import MeasuredNetwork
    from core.estimate.result import FitEstimate

WAITING_FOR_GPUS = "auto: looking for a GPU\u2026"


def env_key(env: EnvSpec | dict[str, Any]) -> str:
    data = env if isinstance(env, dict) else env.model_dump(mode="json")
    return json.dumps(data, sort_keys=True, default=repr)


def target_choices(detect: bool = True) -> list[tuple[str, str]]:
    """(value for ``target_gpu``, label) for the target combo: auto, detected GPUs, profiles.

    ``detect=False``: the shipped profiles only, NVML not asked.
    """
    from core.estimate.gpus import detected_profiles, known_profiles

    detected = detected_profiles() if detect else []
    auto = WAITING_FOR_GPUS if not detect else \
        f"auto: {detected[0].name.removeprefix('this machine: ')}" if detected else "auto: no GPU detected (CPU)"
    out = [("auto", auto)]
    out += [(p.name, f"{p.name} ({p.memory_gib:.1f} GiB)") for p in detected[1:]]
    out += [(p.name, f"{p.name} ({p.memory_gib:.0f} GiB)") for p in known_profiles()]
    return out


def target_profile(cfg: RunConfig) -> GpuProfile | None:
    """The GPU profile the config plans for (``None``: no GPU); unknown names are the estimate's error."""
    from core.estimate.gpus import get_profile

    try:
        return get_profile(cfg.target_gpu)
    except ConfigError:
        return None


def needs_torch_facts(cfg: RunConfig) -> bool:
    """Whether the device depends on the worker's torch (an SBX run: its jax): a GPU here or CUDA asked for."""
    from core.estimate.gpus import detected_profiles

    device = cfg.runtime.device
    if device == "cpu":
        return False
    return device.startswith("cuda") or bool(detected_profiles())


def measurable(cfg: RunConfig) -> bool:
    """Whether the estimate waits for a measurement: the user's own network, or an SBX model where sbx is installed
    (elsewhere validation says what to install, and nothing is built)."""
    from core.config.engines import sbx_installed
    from core.estimate.measured import needs_measure

    return needs_measure(cfg) and (cfg.runtime.engine != "sbx" or sbx_installed())


HISTORY_TTL_S = 30.0  # a card's last runs are read at most this often (the estimate runs on every keystroke)
_history: dict[tuple[str, str, str], tuple[float, tuple[float, ...]]] = {}


def with_card_history(gpu: GpuProfile | None, runs_dir: Path | None, engine: str = "sb3") -> GpuProfile | None:
    """A detected card with how its last runs of ``engine`` in ``runs_dir`` compared with their estimates."""
    from core.estimate.gpus import with_history

    if gpu is None or not gpu.detected or runs_dir is None or not gpu.uuid:
        return gpu
    key = (str(runs_dir), gpu.uuid, engine)
    known = _history.get(key)
    if known is None or time.monotonic() - known[0] > HISTORY_TTL_S:
        from core.run.card_history import card_ratios

        known = _history[key] = (time.monotonic(), card_ratios(runs_dir, gpu.uuid, engine=engine))
    return with_history(gpu, known[1])


def estimate_for(cfg: RunConfig, spaces: EnvSpaces, host_total: int | None,
                 torch: dict[str, Any] | None = None, runs_dir: Path | None = None) -> tuple[FitEstimate | None, str]:
    """The fit estimate, or ``None`` and why not."""
    from core.estimate.estimate import estimate
    from core.estimate.gpus import get_profile

    try:
        gpu = with_card_history(get_profile(cfg.target_gpu), runs_dir, cfg.runtime.engine)
        return estimate(cfg, spaces, gpu, host_memory_bytes=host_total, torch=torch), ""
    except ConfigError as exc:
        return None, "; ".join(i.message for i in exc.issues)
    except (ValueError, TypeError, KeyError) as exc:  # an estimate bug must not take the panel down
        return None, f"cannot estimate: {exc}"


def probe(env: EnvSpec) -> tuple[Any, str]:
    """(spaces, "") or (None, why not): the env's spaces, read off the GUI thread."""
    from core.config.spaces import probe_spaces

    try:
        return probe_spaces(env), ""
    except ConfigError as exc:
        return None, "; ".join(i.message for i in exc.issues)


class SpacesCache(QObject):
    """Env spaces by env; ``ready(key)`` when a probe finishes (its result or error is cached)."""

    ready = Signal(str)

    def __init__(self, parent: QObject | None = None, held: bool = False):
        """``held``: probes asked for wait for ``release()`` (the window's, after its first frame: a probe imports
        gymnasium and creates the env, on a thread that would slow the first frame)."""
        super().__init__(parent)
        self._results: dict[str, tuple[Any, str]] = {}
        self._pending: set[str] = set()
        self._held: dict[str, EnvSpec] | None = {} if held else None

    def get(self, env: EnvSpec) -> tuple[Any, str] | None:
        """(spaces, error) when known; else start a probe and return ``None``."""
        key = env_key(env)
        if key in self._results:
            return self._results[key]
        if key not in self._pending:
            self._pending.add(key)
            if self._held is not None:
                self._held[key] = env.model_copy(deep=True)
            else:
                self._start(key, env.model_copy(deep=True))
        return None

    def release(self) -> None:
        """Start the probes held back, and any later one at once."""
        held, self._held = self._held or {}, None
        for key, env in held.items():
            self._start(key, env)

    def _start(self, key: str, env: EnvSpec) -> None:
        run_in_background(lambda: probe(env), lambda found: self._done(key, found),
                          lambda message: self._done(key, (None, message)))

    def _done(self, key: str, found: tuple[Any, str]) -> None:
        if not isValid(self):  # the window closed while the probe ran: nobody waits for it
            return
        self._pending.discard(key)
        self._results[key] = found
        self.ready.emit(key)

    def wait(self, msecs: int = 30000) -> bool:
        return wait_for_background(msecs)


class TorchFactsCache(QObject):
    """The worker's torch facts (CUDA or not), or its jax's for an SBX config, probed once each in the background;
    ``ready`` when known.

    The probe imports torch (jax) in a child process with this interpreter (``core.estimate.device``,
    ``core.estimate.jax_device``); its answer is cached per interpreter and version, so a second start of the window
    asks no one.
    """

    ready = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._facts: dict[str, dict[str, Any] | None] = {}  # by engine; read from the cache at the first get of each
        self._pending: set[str] = set()

    def get(self, engine: str = "sb3") -> dict[str, Any] | None:
        """The facts of ``engine``'s library when known; else start the probe (once) and return ``None``."""
        from core.estimate.device import cached_torch_facts, torch_facts
        from core.estimate.jax_device import cached_jax_facts, jax_facts

        sbx = engine == "sbx"
        if engine not in self._facts:
            self._facts[engine] = cached_jax_facts() if sbx else cached_torch_facts()
        if self._facts[engine] is None and engine not in self._pending:
            self._pending.add(engine)
            run_in_background(jax_facts if sbx else torch_facts, lambda facts: self._done(engine, facts),
                              lambda message: self._done(engine, {"error": message}))
        return self._facts[engine]

    def pending(self) -> bool:
        return bool(self._pending)

    def _done(self, engine: str, facts: dict[str, Any]) -> None:
        if not isValid(self):  # the window closed while the probe ran
            return
        self._pending.discard(engine)
        self._facts[engine] = facts
        self.ready.emit()


def measure(cfg: RunConfig) -> tuple[MeasuredNetwork | None, str]:
    """(the measured own network, "") or (None, why not): off the GUI thread (a child process builds it)."""
    from core.estimate.measured import measure_network

    try:
        return measure_network(cfg), ""
    except ConfigError as exc:
        return None, "; ".join(i.message for i in exc.issues)


class NetworkCache(QObject):
    """The user's own network or an SBX model measured (``core.estimate.measured``), once per network; ``ready`` when a
    measurement ends.

    Asked only for a config whose code is trusted (the model checks first). The estimate reads the measurement
    from ``core.estimate.measured.lookup``, which the background measurement fills."""

    ready = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._results: dict[str, tuple[MeasuredNetwork | None, str]] = {}
        self._pending: set[str] = set()

    def get(self, cfg: RunConfig) -> tuple[MeasuredNetwork | None, str] | None:
        """(measurement or None, error) when known; else start measuring and return ``None``."""
        from core.estimate.measured import network_key  # light: no torch, no estimate

        key = network_key(cfg)
        if key in self._results:
            return self._results[key]
        if key not in self._pending:
            self._pending.add(key)
            copy = cfg.model_copy(deep=True)
            run_in_background(lambda: measure(copy), lambda found: self._done(key, found),
                              lambda message: self._done(key, (None, message)))
        return None

    def _done(self, key: str, found: tuple[MeasuredNetwork | None, str]) -> None:
        if not isValid(self):  # the window closed while the network was measured
            return
        self._pending.discard(key)
        self._results[key] = found
        self.ready.emit()
