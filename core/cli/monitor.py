"""``rlpanel monitor``: the telemetry sampler in a terminal, a line per GPU per tick (like ``nvidia-smi -l``)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Any

from core.cli.common import CliError
from core.telemetry.nvml import GpuSample, GpuSampler, nvml_status
from core.util.procs import tree_pids
from core.util.text import format_bytes, na

MIN_INTERVAL = 0.05

# (header, width, formatter): one column of the live table.
COLUMNS: list[tuple[str, int, Any]] = [
    ("time", 12, lambda s: time.strftime("%H:%M:%S", time.localtime(s.t)) + f".{int(s.t * 10) % 10}"),
    ("gpu", 3, lambda s: str(s.index)),
    ("name", 24, lambda s: (s.name or "n/a")[:24]),
    ("memory used", 20, lambda s: f"{_gib(s.memory_used_bytes)} / {_gib(s.memory_total_bytes)} GiB"),
    ("util", 5, lambda s: na(s.utilization_pct, "{} %")),
    ("mem%", 5, lambda s: na(s.memory_utilization_pct, "{} %")),
    ("temp", 5, lambda s: na(s.temperature_c, "{} C")),
    ("power", 15, lambda s: f"{na(s.power_w, '{:.1f}')} / {na(s.power_limit_w, '{:.0f}')} W"),
    ("sm clock", 9, lambda s: na(s.sm_clock_mhz, "{} MHz")),
    ("fan", 5, lambda s: na(s.fan_pct, "{} %")),
    ("process mem", 11, lambda s: format_bytes(s.process_memory_bytes) if s.process_memory_source else "n/a"),
]


def _gib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / (1 << 30):.2f}"


def format_header() -> str:
    return "  ".join(f"{title:<{width}}" for title, width, _ in COLUMNS).rstrip()


def format_row(sample: GpuSample) -> str:
    return "  ".join(f"{fmt(sample):<{width}}" for _, width, fmt in COLUMNS).rstrip()


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "monitor", parents=[common], help="live GPU table, a line per GPU per tick (like nvidia-smi -l)",
        description="Sample every GPU through NVML and print a line per GPU per tick. "
                    "'n/a' means the GPU or driver does not report that reading.")
    p.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help="seconds between samples (default 1; 0.2 catches PPO's update bursts)")
    p.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")
    p.add_argument("--count", type=int, metavar="N", help="stop after N samples")
    p.add_argument("--csv", metavar="FILE", help="also write every sample to FILE (CSV, one row per GPU per tick)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --csv FILE")
    p.add_argument("--pid", type=int, metavar="PID",
                   help="report the GPU memory of this process and its children (e.g. a run's worker)")
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    if not args.interval >= MIN_INTERVAL:
        raise CliError(f"--interval {args.interval:g} is too short; use at least {MIN_INTERVAL:g} s (e.g. --interval 0.2)")
    if args.count is not None and args.count < 1:
        raise CliError(f"--count {args.count} must be at least 1 (or leave it out to run until Ctrl-C)")
    if args.duration is not None and not args.duration > 0:
        raise CliError(f"--duration {args.duration:g} must be more than 0 s (or leave it out to run until Ctrl-C)")
    if args.csv and Path(args.csv).exists() and not args.overwrite:
        raise CliError(f"{args.csv} already exists; choose another file or pass --overwrite")
    if args.csv and not Path(args.csv).expanduser().resolve().parent.is_dir():
        raise CliError(f"the folder of --csv {args.csv} does not exist; create it or choose another path")


def run(args: argparse.Namespace) -> int:
    _check(args)
    status = nvml_status()
    if not status.available:
        print(f"rlpanel monitor: NVML not available: {status.reason}", file=sys.stderr)
        if args.json:
            print("[]")
        return 0
    sampler = GpuSampler()
    fields = list(GpuSample._fields)
    csv_file = open(Path(args.csv).expanduser(), "w", newline="", encoding="utf-8") if args.csv else None
    writer = csv.DictWriter(csv_file, fieldnames=fields) if csv_file else None
    if writer:
        writer.writeheader()
    collected: list[dict[str, Any]] = []
    if not args.json:
        print(format_header(), flush=True)
    start = next_tick = time.monotonic()
    ticks = 0
    try:
        while True:
            pids = tree_pids(args.pid) if args.pid else None
            samples = sampler.sample(pids)
            for s in samples:
                row = s._asdict()
                if writer:
                    writer.writerow(row)
                if args.json:
                    collected.append(row)
                else:
                    print(format_row(s))
            sys.stdout.flush()
            if csv_file:
                csv_file.flush()
            ticks += 1
            if args.count is not None and ticks >= args.count:
                break
            next_tick += args.interval
            now = time.monotonic()
            if args.duration is not None and next_tick - start > args.duration:
                break
            time.sleep(max(0.0, next_tick - now))
    except KeyboardInterrupt:
        pass  # Ctrl-C ends a monitor normally; what was sampled is kept
    finally:
        if csv_file:
            csv_file.close()
    if args.json:
        print(json.dumps(collected, indent=2))
    return 0
