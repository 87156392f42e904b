"""Self-calibration: the fixed costs of CUDA measured on the user's own card, driver, torch and OS.

``run_calibration()`` runs the probe (``python -m core.worker.calibrate``, a process of its own:
~10-20 s), turns its steps into the estimate's constants (``derive``) and stores them in the user
folder (``calibrations.json``), keyed by the card's NVML UUID, the driver and the torch version:
a new driver or torch is a new key, since both change the kernels loaded. ``apply_stored`` gives a
detected card's profile those constants when a calibration matches (``core.estimate.gpus.calibrated``;
call ``detected_profiles(refresh=True)`` after a new one); the estimate then says "measured on
this card 2026-11-26" instead of "the table for ada". See docs/estimate.md.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.util.console import CHILD_TEXT, utf8_env
from core.util.files import read_json, write_json_atomic
from core.util.paths import CODE_ROOT, user_home

CALIBRATE_MODULE = "core.worker.calibrate"
FILE_NAME = "calibrations.json"
MIB = 1 << 20


class CalibrationError(Exception):
    """The probe could not measure (no CUDA, a driver error): one line for the user."""


@dataclass(frozen=True)
class Calibration:
    """The constants measured on one card with one driver and one torch."""

    uuid: str
    name: str
    driver: str
    torch: str
    os: str
    measured_at: str        # ISO date and time
    figure: str             # "process" (NVML's per-process memory) or "card" (the card's used memory: WDDM)
    context_bytes: int
    workspace_bytes: int
    cudnn_bytes: int
    cudnn_workspace_bytes: int
    small_segment_bytes: int

    @property
    def key(self) -> str:
        return calibration_key(self.uuid, self.driver, self.torch)

    @property
    def day(self) -> str:
        return self.measured_at[:10]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields})


def calibration_key(uuid: str | None, driver: str | None, torch: str | None) -> str:
    return f"{uuid}|driver {driver}|torch {torch}"


def torch_version() -> str | None:
    """The torch a worker here imports, read without importing it (``2.11.0+cu130``)."""
    from importlib import metadata  # here: ~40 ms of imports (email...) the window's first frame does not wait for

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def _figure(step: dict[str, Any]) -> tuple[int, str]:
    if isinstance(step.get("process_bytes"), int) and step["process_bytes"] > 0:
        return step["process_bytes"], "process"
    if isinstance(step.get("card_delta_bytes"), int) and step["card_delta_bytes"] > 0:
        return step["card_delta_bytes"], "card"
    raise CalibrationError("NVML gave neither this process's memory nor the card's: nothing to calibrate from")


def derive(probe: dict[str, Any], now: datetime.datetime | None = None) -> Calibration:
    """The constants from the probe's steps (``core.worker.calibrate``).

    context: outside the allocator after an MLP's forward, backward and Adam step (the figure less
    reserved); workspaces: the large pool then (the MLP's own tensors are small-pool sized); cuDNN:
    what a convolution adds outside the allocator and to the large pool; the small segment: the
    small pool's reservation for the tiny tensors."""
    if "error" in probe:
        raise CalibrationError(str(probe["error"]))
    steps = {s.get("step"): s for s in probe.get("steps") or [] if isinstance(s, dict)}
    if "mlp" not in steps or "conv" not in steps:
        raise CalibrationError(f"the probe's answer lacks its steps (has {sorted(map(str, steps))})")
    mlp, conv = steps["mlp"], steps["conv"]
    mlp_figure, figure = _figure(mlp)
    conv_figure, _ = _figure(conv)
    context = mlp_figure - int(mlp["reserved_bytes"])
    cudnn = max(0, conv_figure - int(conv["reserved_bytes"]) - context)
    workspace = int(mlp["large_pool_bytes"])
    if context <= 0 or workspace <= 0:
        raise CalibrationError(f"implausible readings (outside the allocator {context / MIB:.0f} MiB, "
                               f"workspaces {workspace / MIB:.0f} MiB): is another process using this GPU?")
    when = (now or datetime.datetime.now()).isoformat(timespec="seconds")
    return Calibration(
        uuid=str(probe.get("uuid") or f"cuda:{probe.get('index', 0)}"), name=str(probe.get("name") or "GPU"),
        driver=str(probe.get("driver")), torch=str(probe.get("torch_dist") or probe.get("torch")), os=str(probe.get("os")),
        measured_at=when, figure=figure, context_bytes=context, workspace_bytes=workspace, cudnn_bytes=cudnn,
        cudnn_workspace_bytes=max(0, int(conv["large_pool_bytes"]) - workspace),
        small_segment_bytes=max(int(mlp.get("small_pool_bytes") or 0), 0) or 2 * MIB)


def store_path() -> Path:
    return user_home() / FILE_NAME


def stored() -> dict[str, Calibration]:
    """Every calibration in the user folder by key (a damaged entry is skipped)."""
    out = {}
    for key, value in (read_json(store_path(), default=None) or {}).items():
        try:
            out[key] = Calibration.from_json(value)
        except (TypeError, ValueError):
            continue
    return out


def save(cal: Calibration) -> Path:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    table = read_json(path, default=None) or {}
    table[cal.key] = cal.to_json()
    write_json_atomic(path, table)
    return path


def lookup(uuid: str | None, driver: str | None, torch: str | None = None) -> Calibration | None:
    if not uuid:
        return None
    return stored().get(calibration_key(uuid, driver, torch or torch_version()))


def run_probe(index: int = 0, timeout: float = 180.0) -> dict[str, Any]:
    """The probe's JSON from a child process with this interpreter (the worker's)."""
    if torch_version() is None:
        raise CalibrationError("torch is not installed in this Python; pip install torch")
    try:
        out = subprocess.run([sys.executable, "-m", CALIBRATE_MODULE, "--index", str(index)], capture_output=True,
                             **CHILD_TEXT, env=utf8_env(os.environ), timeout=timeout, cwd=str(CODE_ROOT))
    except subprocess.TimeoutExpired:
        raise CalibrationError(f"the CUDA probe took over {timeout:g} s") from None
    try:
        data: dict[str, Any] = json.loads(out.stdout)
    except ValueError:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise CalibrationError(f"the CUDA probe failed: {last}") from None
    return data


def run_calibration(index: int = 0, timeout: float = 180.0) -> Calibration:
    """Measure CUDA device ``index`` in a probe process and store the result; raises CalibrationError."""
    cal = derive(run_probe(index, timeout))
    save(cal)
    return cal


def describe(cal: Calibration) -> str:
    """What was measured, in lines a person reads: rlpanel calibrate prints it, the System tab shows it."""
    figure = "NVML's figure for this process" if cal.figure == "process" else "the card's used memory (no per-process figure)"
    return "\n".join([
        f"calibrated {cal.name} ({cal.uuid}), driver {cal.driver}, torch {cal.torch}, {cal.os}, {cal.measured_at}",
        f"  outside torch's allocator: {cal.context_bytes / MIB:,.0f} MiB (context, kernels, handles; from {figure})",
        f"  cuBLAS workspaces:         {cal.workspace_bytes / MIB:,.0f} MiB",
        f"  cuDNN:                     {cal.cudnn_bytes / MIB:,.0f} MiB + {cal.cudnn_workspace_bytes / MIB:,.0f} MiB workspace",
        f"stored in {store_path()}; estimates for this card now use it",
    ])
