"""The doctor's report: what this machine offers for training (python, torch and CUDA, NVML and each GPU, the
runs folder's free space, the power plan, battery and power mode, Windows Update's active hours and a pending
restart, and the Windows traps of ``core.machine.windows_traps``), and what is missing.

``rlpanel doctor`` prints it and the System tab shows it, the same text (``format_report``). It lives in
``core.estimate``, the lowest layer that sees both torch's facts (``core.estimate.device``: a subprocess, never torch
here) and NVML (``core.telemetry``); a Ray cluster's report is ``core.cluster.doctor``.
"""

from __future__ import annotations

import platform
import shutil
import sys
from pathlib import Path
from typing import Any

from core.estimate.device import torch_facts
from core.machine.windows_traps import windows_lines, windows_section
from core.telemetry.nvml import GpuSampler, detect_gpus, nvml_status
from core.util.paths import user_home
from core.util.power_source import power_source_lines, read_power_source
from core.util.powercfg import read_power_plan
from core.util.text import format_bytes, na
from core.util.winupdate import read_windows_update, windows_update_lines


def doctor_gpu_lines() -> list[str]:
    """What ``rlpanel doctor`` says about NVML and each GPU (read through the sampler)."""
    status = nvml_status()
    if not status.available:
        return [f"NVML not available: {status.reason}"]
    lines = [f"NVML available: driver {status.driver_version or 'n/a'}, {status.device_count} GPU(s)"]
    if status.device_count == 0:
        lines.append("no NVIDIA GPU found by NVML")
    infos = {g.index: g for g in detect_gpus()}
    for s in GpuSampler().sample():
        info = infos.get(s.index)
        cc = info.compute_capability if info else None
        lines.append(
            f"GPU {s.index}: {s.name or 'n/a'}, {format_bytes(s.memory_total_bytes)}, "
            f"compute capability {na(cc and f'{cc[0]}.{cc[1]}')}; "
            f"{format_bytes(s.memory_used_bytes)} used, temp {na(s.temperature_c, '{} C')}, "
            f"util {na(s.utilization_pct, '{} %')}, power {na(s.power_w, '{:.1f} W')} "
            f"of {na(s.power_limit_w, '{:.0f} W')}, SM {na(s.sm_clock_mhz, '{} MHz')}, "
            f"fan {na(s.fan_pct, '{} %')}")
    return lines


def gpu_facts() -> dict[str, Any]:
    status = nvml_status()
    return {"available": status.available, "reason": status.reason, "driver_version": status.driver_version,
            "lines": doctor_gpu_lines()}


def report(runs: Path) -> dict[str, Any]:
    """Everything ``rlpanel doctor`` shows; the System tab shows the same."""
    disk_at = runs if runs.exists() else runs.parent if runs.parent.exists() else Path.home()
    usage = shutil.disk_usage(disk_at)
    nvml = gpu_facts()
    return {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "user_folder": str(user_home()),
        "runs_dir": str(runs),
        "disk_free_bytes": usage.free,
        "disk_total_bytes": usage.total,
        "torch": torch_facts(refresh=True),
        "nvml": nvml,
        "power": read_power_plan(),  # Windows: the active plan and what would suspend an overnight run
        "power_source": read_power_source(),  # battery or mains anywhere; Windows: the power mode
        "windows_update": read_windows_update(),  # Windows: when it may restart the machine; None elsewhere
        # Windows: Defender, Controlled Folder Access, long paths, sysmem fallback, TDR; each None elsewhere
        "windows": windows_section(str(runs.absolute()), nvml["driver_version"],
                                   getattr(sys, "_base_executable", None) or sys.executable),
    }


def format_report(data: dict[str, Any]) -> str:
    """The report as ``rlpanel doctor`` prints it and the System tab shows it."""
    t = data["torch"]
    lines = [f"python      {data['python']} ({data['executable']})", f"platform    {data['platform']}"]
    if "error" in t:
        lines.append(f"torch       NOT USABLE: {t['error']}")
    else:
        build = f"CUDA {t['torch_cuda_build']} build" if t["torch_cuda_build"] else "CPU-only build"
        lines.append(f"torch       {t['torch']} ({build}), {t['torch_threads']} CPU threads")
        if t["cuda_available"]:
            for d in t["devices"]:
                tf32 = "TF32 yes" if d["tf32_supported"] else "TF32 no (needs compute capability 8.0+)"
                lines.append(f"cuda:{d['index']}      {d['name']}, {d['memory_total_bytes'] / 2**30:.1f} GiB, "
                             f"compute {d['compute_capability']}, {tf32}")
        elif t["torch_cuda_build"]:
            lines.append("CUDA        not available to torch (driver missing or too old?); runs use the CPU")
        else:
            lines.append("CUDA        this torch is a CPU-only build; see the README for installing the CUDA build")
        lines.append(f"SB3         {t['stable_baselines3']}, gymnasium {t['gymnasium']}")
    nvml = data["nvml"]
    if nvml["available"]:
        lines.append(f"driver      NVIDIA {nvml.get('driver_version')}")
    else:
        lines.append(f"NVML        not available: {nvml['reason']}")
    if nvml["available"]:
        lines += [f"            {line}" for line in nvml.get("lines") or []]
    free = data["disk_free_bytes"] / 2**30
    lines.append(f"runs        {data['runs_dir']} ({free:,.1f} GiB free)")
    lines.append(f"user folder {data['user_folder']}")
    lines += power_lines(data.get("power"))
    lines += power_source_lines(data.get("power_source"))
    lines += windows_update_lines(data.get("windows_update"))
    lines += windows_lines(data.get("windows"))
    return "\n".join(lines)


def power_lines(power: dict[str, Any] | None) -> list[str]:
    """The power plan's lines of the report (none off Windows)."""
    if power is None:
        return []
    if "error" in power:
        return [f"power plan  unknown: {power['error']}"]
    lines = [f"power plan  {power.get('plan') or 'n/a'}" + ("" if power["warnings"] else ": nothing suspends an overnight run")]
    return lines + [f"WARNING     {w}" for w in power["warnings"]]
