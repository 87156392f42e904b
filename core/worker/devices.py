"""The NVML GPU a run trains on (or, on a CPU run, the GPU the guard watches): torch's side of the
mapping ``core.telemetry.devices.nvml_index`` makes. The telemetry recorder (the run's own GPU
memory), the GPU guard and the energy (``run_gpu`` in telemetry's status line) all use its index.

Checked by reading only on this project's machines (no GPU): ``torch.cuda.get_device_properties(i).uuid``
(torch >= 2.0 on CUDA; a ``uuid.UUID``-like value whose text has no ``GPU-`` prefix). The parsing
of ``CUDA_VISIBLE_DEVICES`` that follows when torch cannot tell is what the tests drive.
"""

from __future__ import annotations

import os

import torch as th

from core.telemetry.devices import GpuMatch, nvml_index
from core.telemetry.nvml import gpu_uuids, nvml_status


def cuda_index(device: str) -> int:
    """The CUDA index a run's device names (``cuda:1`` -> 1); 0 for ``cuda`` and for a CPU run (a laptop's
    one GPU shares the cooling with the CPU that trains)."""
    _, _, index = device.partition(":")
    return int(index) if index.isdigit() else 0


def torch_uuid(index: int) -> str | None:
    """torch's UUID of CUDA device ``index``, or None when this torch has no CUDA or no such device."""
    try:
        if not th.cuda.is_available() or not 0 <= index < th.cuda.device_count():
            return None
        value = getattr(th.cuda.get_device_properties(index), "uuid", None)
    except (RuntimeError, AssertionError, AttributeError):  # a broken driver, a CPU build
        return None
    return str(value) if value else None


def run_gpu(device: str, ask_torch: bool = True) -> GpuMatch | None:
    """The NVML index of the GPU for a run on ``device`` (``cuda:N``, ``cuda``, ``cpu``), with how it was
    found; None when NVML lists no GPU. torch is asked only for a CUDA device (a CPU run never makes
    a CUDA context for this), and not for an SBX run (``ask_torch`` False: JAX holds the GPU, and a torch
    context beside it would add its own memory to the run's peak); CUDA_VISIBLE_DEVICES decides then."""
    status = nvml_status()
    if not status.available or not status.device_count:
        return None
    index = cuda_index(device)
    uuid = torch_uuid(index) if device.startswith("cuda") and ask_torch else None
    match = nvml_index(index, gpu_uuids(), torch_uuid=uuid, visible=os.environ.get("CUDA_VISIBLE_DEVICES"))
    if not 0 <= match.gpu < status.device_count:
        return GpuMatch(status.device_count - 1, f"{match.how}; NVML lists {status.device_count} GPU(s): the last one")
    return match
