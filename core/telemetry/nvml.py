"""GPU readings through NVML: one wrapper around every NVML call, immutable samples.

Every NVML call goes through ``_read``: a reading that raises NotSupported, or any other NVML
error, is ``None`` ("not available") in that sample while the other readings are still taken.
NVML is initialised once per process (lazily: importing this module does not import pynvml);
a failure is kept in ``nvml_status()`` with a reason a user can act on, and every later call
answers "not available" without trying again.

This run's GPU memory comes from NVML's list of compute processes matched against the run's
process tree. Where NVML gives no figure for those pids (Windows' WDDM reports none; inside a
container NVML lists host pids that never match), the GPU the run trains on takes Windows'
counter (``core.telemetry.wddm``, on Windows), else a ``torch_memory`` callable supplied by the
worker (``torch.cuda.memory_reserved()``), and the sample names the measure in
``process_memory_source`` (``core.telemetry.gpu_measure``: "nvml_process" | "wddm_counter" |
"torch_reserved" | None).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from core.telemetry.gpu_measure import NVML_PROCESS, TORCH_RESERVED, WDDM_COUNTER
from core.telemetry.wddm import WddmMemory

LIBRARY_NOT_FOUND = "NVML shared library not found (no NVIDIA driver installed?)"


class NvmlStatus(NamedTuple):
    """Whether NVML could be used in this process, and if not, why."""

    available: bool
    reason: str | None
    driver_version: str | None
    device_count: int


class GpuInfo(NamedTuple):
    """What a GPU is (does not change while the process runs)."""

    index: int  # type: ignore[assignment]  # shadows tuple.index; the field name is the file format's
    name: str | None
    memory_total_bytes: int | None
    compute_capability: tuple[int, int] | None


class GpuSample(NamedTuple):
    """One reading of one GPU at unix time ``t``; ``None`` means "not available"."""

    t: float
    index: int  # type: ignore[assignment]  # shadows tuple.index; the field name is the file format's
    name: str | None
    memory_used_bytes: int | None
    memory_total_bytes: int | None
    temperature_c: int | None
    temperature_slowdown_c: int | None  # where the GPU starts to throttle (NVML's slowdown threshold)
    utilization_pct: int | None
    memory_utilization_pct: int | None
    power_w: float | None
    power_limit_w: float | None
    sm_clock_mhz: int | None
    fan_pct: int | None
    process_memory_bytes: int | None
    process_memory_source: str | None  # its measure (core.telemetry.gpu_measure); the field keeps the file's name
    throttle_reasons: int | None = None  # NVML's clock event (throttle) reasons bit mask: core.telemetry.throttle names them
    energy_mj: int | None = None  # NVML's total energy counter (millijoules since the driver loaded)


# --- NVML: initialised once per process --------------------------------------------------------

_lock = threading.Lock()
_status: NvmlStatus | None = None
_nvml: Any = None  # the pynvml module once init succeeded
_handles: list[Any] = []  # per GPU index: an NVML handle, or None when it could not be had


def _nvml_errors(pynvml: Any) -> tuple[type[BaseException], ...]:
    return (pynvml.NVMLError, pynvml.NVMLLibraryMismatchError)


def _read(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, or ``None`` when NVML says the reading is not available (any NVML error)."""
    try:
        return fn(*args)
    except _nvml_errors(_nvml):
        return None


def _init_reason(pynvml: Any, exc: BaseException) -> str:
    code = getattr(exc, "value", None)
    if code == pynvml.NVML_ERROR_LIBRARY_NOT_FOUND:
        return LIBRARY_NOT_FOUND
    if code == pynvml.NVML_ERROR_DRIVER_NOT_LOADED:
        return "NVIDIA driver not loaded (is the kernel module loaded? try nvidia-smi)"
    if code == pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        return ("NVIDIA driver/library version mismatch (the driver was updated without a reboot; "
                "reboot to fix)")
    if code == pynvml.NVML_ERROR_NO_PERMISSION:
        return f"no permission to use NVML ({exc})"
    return f"NVML init failed: {exc}"


def nvml_status() -> NvmlStatus:
    """Initialise NVML on the first call (once per process) and say whether it is usable."""
    global _status, _nvml, _handles
    if _status is not None:
        return _status
    with _lock:
        if _status is not None:
            return _status
        try:
            import pynvml
        except ImportError as exc:
            _status = NvmlStatus(False, f"the nvidia-ml-py package is missing ({exc}); "
                                        "fix: pip install nvidia-ml-py", None, 0)
            return _status
        try:
            pynvml.nvmlInit()
        except _nvml_errors(pynvml) as exc:
            _status = NvmlStatus(False, _init_reason(pynvml, exc), None, 0)
            return _status
        except OSError as exc:  # a library that loads but is not NVML, a bad architecture, ...
            _status = NvmlStatus(False, f"NVML library could not be loaded: {exc}", None, 0)
            return _status
        _nvml = pynvml
        driver = _read(pynvml.nvmlSystemGetDriverVersion)
        try:
            count = pynvml.nvmlDeviceGetCount()
        except _nvml_errors(pynvml) as exc:
            _nvml = None
            _status = NvmlStatus(False, f"NVML could not count the GPUs: {exc}", driver, 0)
            return _status
        _handles = [_read(pynvml.nvmlDeviceGetHandleByIndex, i) for i in range(count)]
        _status = NvmlStatus(True, None, driver, count)
        return _status


def detect_gpus() -> list[GpuInfo]:
    """The GPUs on this machine (empty when NVML is not available)."""
    if not nvml_status().available:
        return []
    gpus = []
    for index, handle in enumerate(_handles):
        if handle is None:
            gpus.append(GpuInfo(index, None, None, None))
            continue
        memory = _read(_nvml.nvmlDeviceGetMemoryInfo, handle)
        cc = _read(_nvml.nvmlDeviceGetCudaComputeCapability, handle)
        gpus.append(GpuInfo(index, _read(_nvml.nvmlDeviceGetName, handle),
                            memory.total if memory is not None else None,
                            (int(cc[0]), int(cc[1])) if cc is not None else None))
    return gpus


def gpu_uuids() -> list[str | None]:
    """NVML's UUID of each GPU by NVML index (``GPU-...``; None where NVML had none); empty without NVML."""
    if not nvml_status().available:
        return []
    out: list[str | None] = []
    for handle in _handles:
        value = _read(_nvml.nvmlDeviceGetUUID, handle) if handle is not None else None
        out.append(value.decode() if isinstance(value, bytes) else value if isinstance(value, str) else None)
    return out


def _throttle_reasons(handle: Any) -> int | None:
    """The clock event reasons (NVML >= 12.2's name), else the older throttle reasons call."""
    value = _read(_nvml.nvmlDeviceGetCurrentClocksEventReasons, handle)
    if value is None:
        value = _read(_nvml.nvmlDeviceGetCurrentClocksThrottleReasons, handle)
    return None if value is None else int(value)


def slowdown_threshold(index: int) -> int | None:
    """GPU ``index``'s NVML slowdown temperature (where its clocks start to drop), or None."""
    if not nvml_status().available or not 0 <= index < len(_handles) or _handles[index] is None:
        return None
    value = _read(_nvml.nvmlDeviceGetTemperatureThreshold, _handles[index], _nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
    return None if value is None else int(value)


def _milliwatts(value: int | None) -> float | None:
    return None if value is None else value / 1000.0


class GpuSampler:
    """Reads every GPU through NVML; ``sample(pids)`` gives one ``GpuSample`` per GPU.

    Where NVML has no figure for ``pids``, GPU ``torch_device`` takes ``wddm`` (Windows' counter for
    those pids; ``core.telemetry.wddm.platform_wddm`` gives this machine's), else ``torch_memory``
    (the bytes torch reserved there, or None). ``close`` ends the counter's query.
    """

    def __init__(self, torch_memory: Callable[[], int | None] | None = None, torch_device: int = 0,
                 wddm: WddmMemory | None = None):
        self.torch_memory = torch_memory
        self.torch_device = torch_device
        self.wddm = wddm
        self._names: dict[int, str | None] = {}
        self._slowdown: dict[int, int | None] = {}  # a threshold the driver sets once: read once per GPU

    @property
    def status(self) -> NvmlStatus:
        return nvml_status()

    def sample(self, pids: set[int] | None = None) -> list[GpuSample]:
        if not nvml_status().available:
            return []
        t = time.time()
        return [self._sample_one(t, index, handle, pids) for index, handle in enumerate(_handles)]

    def _sample_one(self, t: float, index: int, handle: Any, pids: set[int] | None) -> GpuSample:
        nv = _nvml
        if handle is None:
            mem = util = None
            values: list[Any] = [None] * 8
            name = None
        else:
            if index not in self._names:
                self._names[index] = _read(nv.nvmlDeviceGetName, handle)
            name = self._names[index]
            if index not in self._slowdown:
                self._slowdown[index] = _read(nv.nvmlDeviceGetTemperatureThreshold, handle,
                                              nv.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
            mem = _read(nv.nvmlDeviceGetMemoryInfo, handle)
            util = _read(nv.nvmlDeviceGetUtilizationRates, handle)
            values = [
                _read(nv.nvmlDeviceGetTemperature, handle, nv.NVML_TEMPERATURE_GPU),
                _milliwatts(_read(nv.nvmlDeviceGetPowerUsage, handle)),
                _milliwatts(_read(nv.nvmlDeviceGetEnforcedPowerLimit, handle)),
                _read(nv.nvmlDeviceGetClockInfo, handle, nv.NVML_CLOCK_SM),
                _read(nv.nvmlDeviceGetFanSpeed, handle),
                self._nvml_process_memory(handle, pids),
                _throttle_reasons(handle),
                _read(nv.nvmlDeviceGetTotalEnergyConsumption, handle),
            ]
        temperature, power, power_limit, sm_clock, fan, proc_mem, throttle, energy = values
        source = NVML_PROCESS if proc_mem else None
        if not proc_mem and index == self.torch_device:
            counted = self._wddm_bytes(pids)
            reserved = None if counted else self._torch_reserved()
            if counted:
                proc_mem, source = counted, WDDM_COUNTER
            elif reserved:
                proc_mem, source = reserved, TORCH_RESERVED
        if proc_mem == 0:
            source = NVML_PROCESS  # NVML lists the GPU's processes and this run is not among them
        return GpuSample(
            t=t, index=index, name=name,
            memory_used_bytes=mem.used if mem is not None else None,
            memory_total_bytes=mem.total if mem is not None else None,
            temperature_c=temperature, temperature_slowdown_c=self._slowdown.get(index),
            utilization_pct=util.gpu if util is not None else None,
            memory_utilization_pct=util.memory if util is not None else None,
            power_w=power, power_limit_w=power_limit, sm_clock_mhz=sm_clock, fan_pct=fan,
            process_memory_bytes=proc_mem, process_memory_source=source,
            throttle_reasons=throttle, energy_mj=energy)

    @staticmethod
    def _nvml_process_memory(handle: Any, pids: set[int] | None) -> int | None:
        """Bytes the ``pids`` use on this GPU; 0 when none of them is listed; None when unknown."""
        if not pids:
            return None
        procs = _read(_nvml.nvmlDeviceGetComputeRunningProcesses, handle)
        if procs is None:
            return None
        mine = [p for p in procs if p.pid in pids]
        known = [p.usedGpuMemory for p in mine if p.usedGpuMemory is not None]
        if known:
            return int(sum(known))
        return None if mine else 0  # listed without a figure (WDDM): unknown

    def _wddm_bytes(self, pids: set[int] | None) -> int | None:
        if self.wddm is None or not pids:
            return None
        try:
            return self.wddm.run_bytes(pids)
        except Exception:  # a counter reader must not stop the telemetry thread (PdhReader already catches its own)
            return None

    def close(self) -> None:
        """End what the sampler holds open (Windows' counter query)."""
        if self.wddm is not None:
            self.wddm.close()

    def _torch_reserved(self) -> int | None:
        try:
            value = self.torch_memory() if self.torch_memory is not None else None
        except Exception:  # a dying CUDA context must not stop the telemetry thread
            return None
        return int(value) if value else None
