"""CPU or GPU? The devices a tune probes here, the device the user's config trains on here, and the line saying so.

A tune measures this machine: its probes run here, whatever card ``target_gpu`` plans memory for.
On the measured H100 machine PPO with a 64-64 MLP ran 536 steps/s on the GPU against ~1,500 on a
2-core CPU, and a 1024-512-256 net 7,367 on the GPU against 593 on the CPU: which device wins
depends on the config, so the tune probes the user's config on every device here first.
"""

from __future__ import annotations

from typing import Any

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.estimate.device import cuda_usable, device_issue, train_device
from core.estimate.gpus import get_profile


def usable_devices(facts: dict[str, Any]) -> list[str]:
    """``cpu`` and each CUDA device the worker's torch can use."""
    cuda = facts.get("devices") or [] if facts.get("cuda_available") else []
    return ["cpu"] + [f"cuda:{d.get('index', i)}" for i, d in enumerate(cuda)]


def user_device(cfg: RunConfig, facts: dict[str, Any], devices: list[str]) -> tuple[str, str | None]:
    """The device ``cfg`` asks for as this machine reads it, and why it cannot run here (``None``: it can).

    ``auto`` is where a run launched here trains (``core.estimate.device.train_device``); a CUDA device this
    torch cannot use, or does not have, is kept as asked, with the reason, for the one row that says so.
    """
    requested = cfg.runtime.device
    if device_issue(cfg, facts) is not None:  # Launch and the estimate give the whole fix; a table cell says what
        return requested, f"torch {facts.get('torch', '?')} has no CUDA (a CUDA build of torch would tune the GPU too)"
    device, _ = train_device(cfg, None, facts)
    if device not in devices:
        return device, f"{device} is not a device this torch sees here (it sees {', '.join(devices)})"
    return device, None


def _devices_words(facts: dict[str, Any], devices: list[str]) -> str:
    if "error" in facts:
        return f"cpu; torch could not be asked: {facts['error']}"
    if not cuda_usable(facts):
        return f"cpu; torch {facts.get('torch', '?')} has no CUDA"
    names = {f"cuda:{d.get('index', i)}": d.get("name") for i, d in enumerate(facts.get("devices") or [])}
    return ", ".join(f"{d} {names[d]}" if names.get(d) else d for d in devices)


def machine_line(cfg: RunConfig, facts: dict[str, Any], devices: list[str]) -> str:
    """``tuned for this machine (cpu; torch 2.13.0+cpu has no CUDA), not the target RTX 4060 Laptop``."""
    line = f"tuned for this machine ({_devices_words(facts, devices)})"
    try:
        target = get_profile(cfg.target_gpu) if cfg.target_gpu != "auto" else None
    except ConfigError:  # an unknown profile name: the estimate says so; this line only names the target
        target = None
    if target is not None and not target.detected:
        line += f", not the target GPU {target.name} the config plans memory for"
    return line
