"""Which NVML GPU a CUDA device index is: the one rule, a pure function.

CUDA numbers the devices a process sees; NVML numbers every GPU of the machine in PCI bus order.
They differ when ``CUDA_VISIBLE_DEVICES`` hides or reorders GPUs (``2,3``: CUDA's device 0 is the
machine's GPU 2) and when CUDA's default order (``CUDA_DEVICE_ORDER=FASTEST_FIRST``) puts a faster
GPU first. The reliable link is the GPU's UUID: torch reports it for a CUDA device
(``core.worker.devices`` asks it), NVML for each of its GPUs (``core.telemetry.nvml.gpu_uuids``).
When torch cannot tell (no CUDA build, a CPU run, an old torch), ``CUDA_VISIBLE_DEVICES`` is read
the way CUDA reads it: entries separated by commas, each a whole number (taken as the NVML index:
CUDA orders equal GPUs by PCI bus, as NVML does), ``GPU-<uuid>`` (or a unique prefix of one), or
``MIG-GPU-<uuid>/<gi>/<ci>`` (the MIG slice's GPU); CUDA stops at the first entry it cannot read.
A ``MIG-<uuid>`` entry names a MIG instance whose GPU only NVML's MIG calls could find: it is not
mapped (the CUDA index is kept, and the reason says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class GpuMatch(NamedTuple):
    """The NVML index of a CUDA device (``gpu``) and how it was found (for the run's event log)."""

    gpu: int
    how: str


def _bare(uuid: str) -> str:
    """A UUID without its ``GPU-``/``MIG-`` prefix, lower case (torch gives it bare, NVML prefixed)."""
    text = uuid.strip().lower()
    for prefix in ("gpu-", "mig-"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _by_uuid(uuid: str, nvml_uuids: Sequence[str | None], prefix_ok: bool) -> int | None:
    want = _bare(uuid)
    if not want:
        return None
    found = [i for i, u in enumerate(nvml_uuids) if u and (_bare(u) == want or (prefix_ok and _bare(u).startswith(want)))]
    return found[0] if len(found) == 1 else None


def _visible_entries(visible: str) -> list[str]:
    """The entries CUDA reads: up to the first it cannot (an empty or unknown one ends the list)."""
    out = []
    for raw in visible.split(","):
        entry = raw.strip()
        low = entry.lower()
        if entry.isdigit() or low.startswith(("gpu-", "mig-")):
            out.append(entry)
        else:
            break
    return out


def _entry_index(entry: str, nvml_uuids: Sequence[str | None]) -> int | None:
    low = entry.lower()
    if entry.isdigit():
        return int(entry)
    if low.startswith("mig-gpu-"):  # MIG-GPU-<uuid>/<gi>/<ci> (drivers before R470): the slice's GPU
        return _by_uuid(entry[len("mig-"):].split("/", 1)[0], nvml_uuids, prefix_ok=False)
    if low.startswith("gpu-"):
        return _by_uuid(entry, nvml_uuids, prefix_ok=True)
    return None  # MIG-<uuid>: an instance, not a GPU


def nvml_index(cuda_index: int, nvml_uuids: Sequence[str | None], *, torch_uuid: str | None = None,
               visible: str | None = None) -> GpuMatch:
    """The NVML index of CUDA device ``cuda_index``.

    ``nvml_uuids``: NVML's UUID of each GPU by NVML index (None where NVML had none);
    ``torch_uuid``: torch's UUID of the device, when torch could tell; ``visible``: the process's
    ``CUDA_VISIBLE_DEVICES`` (None: not set). Out of range or unreadable, the CUDA index itself is
    kept, and ``how`` says why.
    """
    count = len(nvml_uuids)
    if torch_uuid:
        found = _by_uuid(torch_uuid, nvml_uuids, prefix_ok=False)
        if found is not None:
            return GpuMatch(found, f"UUID {nvml_uuids[found]} (torch's CUDA device {cuda_index})")
    if visible is None:
        return GpuMatch(cuda_index, f"CUDA device {cuda_index} (no CUDA_VISIBLE_DEVICES)")
    entries = _visible_entries(visible)
    if not 0 <= cuda_index < len(entries):
        return GpuMatch(cuda_index, f"CUDA device {cuda_index}: CUDA_VISIBLE_DEVICES={visible!r} has no entry for it")
    entry = entries[cuda_index]
    found = _entry_index(entry, nvml_uuids)
    if found is None or not 0 <= found < max(count, 1):
        return GpuMatch(cuda_index, f"CUDA device {cuda_index}: CUDA_VISIBLE_DEVICES entry {entry!r} is no GPU NVML lists")
    return GpuMatch(found, f"CUDA_VISIBLE_DEVICES={visible!r}: CUDA device {cuda_index} is {entry!r}")
