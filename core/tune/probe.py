"""One throughput probe: ``python -m core.training.throughput`` in a child process, with a timeout.

The child trains the candidate for a few seconds and writes its figures to a file; a probe that
runs past its timeout, or is cancelled, is ended with its whole process tree (its env
processes too) and reported as such. The tuner never imports torch.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from core.config.schema import RunConfig
from core.util.files import read_json, write_atomic
from core.util.paths import CODE_ROOT
from core.util.procs import terminate_tree

PROBE_MODULE = "core.training.throughput"


@dataclass
class ProbeResult:
    """What one probe measured, or why it measured nothing (``error``)."""

    steps_per_s: float | None = None
    host_bytes: int | None = None
    gpu_bytes: int | None = None
    error: str | None = None
    wall_s: float = 0.0


def probe_timeout(seconds: float) -> float:
    """Generous: torch's start on a loaded machine, a warm-up cycle and the measured cycles."""
    return 180.0 + 10.0 * seconds


def run_probe(cfg: RunConfig, seconds: float, timeout_s: float | None = None,
              cancel: threading.Event | None = None) -> ProbeResult:
    """Train ``cfg`` in a child for ``seconds`` after its warm-up; its steps/s and peak memory."""
    timeout_s = timeout_s or probe_timeout(seconds)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rlpanel-tune-", ignore_cleanup_errors=True) as tmp:
        cfg_path, out_path, log_path = Path(tmp) / "config.yaml", Path(tmp) / "result.json", Path(tmp) / "probe.log"
        write_atomic(cfg_path, cfg.to_yaml())
        folder = cfg.env.path or os.getcwd()  # the custom env's module is imported from there, as the worker does
        pythonpath = os.pathsep.join(filter(None, [str(CODE_ROOT), folder, os.environ.get("PYTHONPATH")]))
        cmd = [sys.executable, "-m", PROBE_MODULE, str(cfg_path), str(out_path), "--seconds", f"{seconds:g}"]
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env={**os.environ, "PYTHONPATH": pythonpath},
                                    cwd=folder if os.path.isdir(folder) else None)
            ended = _wait(proc, started + timeout_s, cancel)
        wall = time.monotonic() - started
        data = read_json(out_path, default=None)
        if ended is not None:
            if isinstance(data, dict) and data.get("steps_per_s"):  # what it measured before its timeout
                return ProbeResult(data["steps_per_s"], data.get("host_peak_bytes"), None,
                                   f"{ended} after {wall:.0f} s; measured over {data.get('cycles')} whole cycles", wall)
            return ProbeResult(error=f"{ended} after {wall:.0f} s, before a whole cycle was measured", wall_s=wall)
        if not isinstance(data, dict):
            tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or ["no output"]
            return ProbeResult(error=f"the probe ended (exit {proc.returncode}) without a result: {tail[0][:300]}", wall_s=wall)
    return ProbeResult(steps_per_s=data.get("steps_per_s"), host_bytes=data.get("host_peak_bytes"),
                       gpu_bytes=data.get("gpu_peak_bytes"), error=data.get("error"), wall_s=wall)


def _wait(proc: subprocess.Popen[bytes], deadline: float, cancel: threading.Event | None) -> str | None:
    """Wait for the child; ``None`` when it ended by itself, else why it was ended."""
    while True:
        try:
            proc.wait(timeout=0.2)
            return None
        except subprocess.TimeoutExpired:
            pass
        why = "cancelled" if cancel is not None and cancel.is_set() else (
            "timed out" if time.monotonic() > deadline else None)
        if why:
            terminate_tree(proc.pid, grace_s=3.0)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
            return why
