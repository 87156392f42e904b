"""Throughput probes in child processes: ``python -m core.worker.throughput_probe --serve``, with a timeout.

Each child trains a candidate for a few seconds and writes its figures to a file. Starting one
(python, torch, SB3) took ~8 s of a ~14 s probe on the measured machine, so a ``ProbePool`` keeps one
serving child per ``process_key`` (device, vec env, torch threads, engine: what a process cannot change
once started, see ``core.worker.throughput_probe.process_settings``) and sends it the candidates that
share it, one at a time. A candidate that runs past its timeout, or is cancelled, ends its child
with its whole process tree (its env processes too) and is reported as such; the next candidate
of that key starts a new child. The tuner never imports torch.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from core.config.schema import RunConfig
from core.estimate.device import worker_threads
from core.util.console import utf8_env
from core.util.files import read_json, write_atomic
from core.util.paths import CODE_ROOT
from core.util.procs import terminate_tree

PROBE_MODULE = "core.worker.throughput_probe"
MAX_SERVERS = 3   # idle children kept for a later candidate; each holds python, torch and SB3 (~350 MiB)
CLOSE_WAIT_S = 5.0  # an idle child told to end (its stdin closed) gets this long before its tree is ended


@dataclass
class ProbeResult:
    """What one probe measured, or why it measured nothing (``error``)."""

    steps_per_s: float | None = None
    host_bytes: int | None = None
    gpu_bytes: int | None = None
    error: str | None = None
    wall_s: float = 0.0
    started_process: bool = False  # the probe paid for a child's start (python, torch, SB3)
    steps: int | None = None       # env steps over the measured whole cycles, and those cycles
    cycles: int | None = None
    first_step: int | None = None  # the env step the measured cycles start at (the warm-up before it)
    learn_s: float | None = None   # of wall_s, the time in learn(); the rest: a start, the envs, the model
    ended: str | None = None       # "timed out" or "cancelled" (its tree was ended), "ended" (the child died)
    collect_s: float | None = None  # of the measured cycles' time, collecting; and training (core.run.time_split)
    train_s: float | None = None

    @property
    def overhead_s(self) -> float | None:
        """The probe's time outside learn(): what a process start (or a reused process) costs."""
        return None if self.learn_s is None else max(0.0, self.wall_s - self.learn_s)


def probe_timeout(seconds: float) -> float:
    """Generous: torch's start on a loaded machine, a warm-up cycle and the measured cycles."""
    return 180.0 + 10.0 * seconds


def env_folder(cfg: RunConfig) -> str:
    """Where the child runs: a custom env's module is imported from there, as the worker does."""
    return cfg.env.path or os.getcwd()


def process_key(cfg: RunConfig) -> tuple[Any, ...]:
    """Candidates with the same key share a child: ``process_settings`` of the child, and its folder."""
    rt = cfg.runtime
    return rt.device, rt.vec_env, worker_threads(cfg, rt.device).count, rt.engine, env_folder(cfg)


class ProbeServer:
    """One serving child; candidates go to it one at a time (``probe``), ``close`` ends it."""

    def __init__(self, folder: str, log_path: Path):
        pythonpath = os.pathsep.join(filter(None, [str(CODE_ROOT), folder, os.environ.get("PYTHONPATH")]))
        self.log_path = log_path
        self._log = open(log_path, "wb")
        env = utf8_env({**os.environ, "PYTHONPATH": pythonpath})
        self.proc = subprocess.Popen([sys.executable, "-m", PROBE_MODULE, "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._log, env=env,
                                     cwd=folder if os.path.isdir(folder) else None)
        self._answers: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=_read_lines, args=(self.proc.stdout, self._answers), name="tune-probe-answers",
                         daemon=True).start()

    def probe(self, cfg_path: Path, out_path: Path, seconds: float, deadline: float,
              cancel: threading.Event | None) -> str | None:
        """Send one candidate and wait for its answer: ``None`` when it answered, else why it did not
        (``timed out``, ``cancelled``: the child's tree is ended; ``ended``: the child ended by itself)."""
        request = {"config": str(cfg_path), "out": str(out_path), "seconds": seconds}
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:  # the child ended before it was asked (a broken pipe)
            return "ended"
        while True:
            try:
                answer = self._answers.get(timeout=0.2)
                return None if answer is not None else "ended"
            except queue.Empty:
                pass
            why = "cancelled" if cancel is not None and cancel.is_set() else (
                "timed out" if time.monotonic() > deadline else None)
            if why:
                self.end()
                return why

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def exit_code(self) -> int | None:
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def log_tail(self) -> str:
        """The last line the child wrote to its log (its stderr): the error of a child that died."""
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    def ask_to_end(self) -> None:
        """Close the child's stdin: it ends after the candidate it probes, if any."""
        try:
            if self.proc.stdin is not None and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:  # a broken pipe: it has ended already
            pass

    def close(self) -> None:
        """Ask the child to end (end of its stdin) and wait; end its tree when it does not."""
        if self.alive:
            self.ask_to_end()
            try:
                self.proc.wait(timeout=CLOSE_WAIT_S)
            except subprocess.TimeoutExpired:
                self.end()
        self._close_files()

    def end(self) -> None:
        """End the child and its tree now (its env processes, its forkserver)."""
        if self.alive:  # a child that ended was reaped: its pid may be another process's by now
            terminate_tree(self.proc.pid, grace_s=3.0)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._close_files()

    def _close_files(self) -> None:
        self._log.close()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:  # a broken pipe: nothing left to flush
                pass


def _read_lines(stream: IO[bytes], answers: queue.Queue[str | None]) -> None:
    for line in stream:
        answers.put(line.decode(errors="replace"))
    answers.put(None)  # the child ended


class ProbePool:
    """Serving children by ``process_key``; ``reuse=False`` starts a fresh child per candidate (as before the pool).

    Not thread-safe: one tune probes one candidate at a time. ``close`` ends the children.
    """

    def __init__(self, reuse: bool = True, max_servers: int = MAX_SERVERS):
        self.reuse, self.max_servers = reuse, max(1, max_servers)
        self.starts = 0  # children started, and candidates probed: for the tests and bench/tune.py
        self.probes = 0
        self._servers: OrderedDict[tuple[Any, ...], ProbeServer] = OrderedDict()
        self._tmp_dir: Path | None = None  # made at the first probe: a pool that never probes leaves nothing behind

    @property
    def _tmp(self) -> Path:
        if self._tmp_dir is None:
            self._tmp_dir = Path(tempfile.mkdtemp(prefix="rlpanel-tune-"))
        return self._tmp_dir

    def __enter__(self) -> ProbePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def starts_process(self, cfg: RunConfig) -> bool:
        """Whether probing ``cfg`` now would start a child (the tuner budgets that start)."""
        server = self._servers.get(process_key(cfg))
        return server is None or not server.alive

    def probe(self, cfg: RunConfig, seconds: float, timeout_s: float | None = None,
              cancel: threading.Event | None = None) -> ProbeResult:
        """Train ``cfg`` for ``seconds`` after its warm-up in a child of its key; its steps/s and peak memory."""
        started = time.monotonic()
        timeout_s = timeout_s or probe_timeout(seconds)
        self.probes += 1
        cfg_path, out_path = self._tmp / f"candidate-{self.probes}.yaml", self._tmp / f"candidate-{self.probes}.json"
        write_atomic(cfg_path, cfg.to_yaml())
        key = process_key(cfg)
        server, fresh = self._server_for(key, env_folder(cfg))
        ended = server.probe(cfg_path, out_path, seconds, started + timeout_s, cancel)
        wall = time.monotonic() - started
        data = read_json(out_path, default=None)
        data = data if isinstance(data, dict) else None
        if ended == "ended":  # the child died (out of memory, a crash in a native library): the next one starts anew
            why = f"the probe ended (exit {server.exit_code()}) without a result: {server.log_tail()[:300]}"
            self._drop(key)
            return ProbeResult(error=why, wall_s=wall, started_process=fresh, ended=ended)
        if ended is not None:  # timed out or cancelled: its tree was ended
            self._drop(key)
            if data is not None and data.get("steps_per_s"):  # what it measured before its timeout
                return ProbeResult(data["steps_per_s"], data.get("host_peak_bytes"), None,
                                   f"{ended} after {wall:.0f} s; measured over {data.get('cycles')} whole cycles", wall, fresh,
                                   steps=data.get("steps"), cycles=data.get("cycles"), ended=ended,
                                   collect_s=data.get("collect_s"), train_s=data.get("train_s"))
            return ProbeResult(error=f"{ended} after {wall:.0f} s, before a whole cycle was measured", wall_s=wall,
                               started_process=fresh, ended=ended)
        if data is None or data.get("partial"):  # an answer always follows the final figures: not reached
            result = ProbeResult(error=f"the probe answered without a result: {server.log_tail()[:300]}", wall_s=wall,
                                 started_process=fresh)
        else:
            result = ProbeResult(steps_per_s=data.get("steps_per_s"), host_bytes=data.get("host_peak_bytes"),
                                 gpu_bytes=data.get("gpu_peak_bytes"), error=data.get("error"), wall_s=wall,
                                 started_process=fresh, steps=data.get("steps"), cycles=data.get("cycles"),
                                 learn_s=data.get("learn_s"), collect_s=data.get("collect_s"), train_s=data.get("train_s"),
                                 first_step=data.get("first_step"))
        if not self.reuse:
            self._drop(key, close=True)
        return result

    def _server_for(self, key: tuple[Any, ...], folder: str) -> tuple[ProbeServer, bool]:
        """The live child of ``key``, or a new one (``True``: started now)."""
        server = self._servers.get(key)
        if server is not None and server.alive:
            self._servers.move_to_end(key)
            return server, False
        self._drop(key)
        while len(self._servers) >= self.max_servers:  # the least recently used idle child makes room
            self._drop(next(iter(self._servers)), close=True)
        self.starts += 1
        server = ProbeServer(folder, self._tmp / f"probe-{self.starts}.log")
        self._servers[key] = server
        return server, True

    def _drop(self, key: tuple[Any, ...], close: bool = False) -> None:
        """Forget the child of ``key``: asked to end (``close``) or ended now."""
        server = self._servers.pop(key, None)
        if server is not None:
            server.close() if close else server.end()

    def close(self) -> None:
        """End every child (all are asked first, by the end of their stdin), then remove the candidates' files."""
        servers = list(self._servers.values())
        self._servers.clear()
        for server in servers:
            server.ask_to_end()
        for server in servers:
            server.close()
        if self._tmp_dir is not None:
            shutil.rmtree(self._tmp_dir, ignore_errors=True)
            self._tmp_dir = None


def run_probe(cfg: RunConfig, seconds: float, timeout_s: float | None = None,
              cancel: threading.Event | None = None) -> ProbeResult:
    """One probe in a fresh child of its own (``bench/tune.py`` measures side by side so)."""
    with ProbePool(reuse=False) as pool:
        return pool.probe(cfg, seconds, timeout_s, cancel)
