"""TensorBoard on a run's ``tb/`` folder: started on a free local port, stopped by its owner.

``TensorBoard(run_dir).start()`` runs the real ``tensorboard --logdir RUN/tb --host 127.0.0.1
--port FREE`` (through this interpreter, ``python -m tensorboard.main``, so a window started from
a shortcut finds it without PATH), ``wait_ready()`` waits until it answers and gives its URL, and
``stop()`` ends it. It binds to 127.0.0.1 only. It is a child of whoever started it (the window
stops it when it closes; ``rlpanel tensorboard`` on Ctrl-C), never a detached process.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from core.run.layout import RunDir
from core.util.procs import CREATE_NO_WINDOW, terminate_tree

HOST = "127.0.0.1"
MISSING = "TensorBoard is not installed in this Python environment; fix: pip install tensorboard"


class TensorBoardError(RuntimeError):
    """TensorBoard cannot show this run, or did not start; the message says why and what to do."""


def missing_reason() -> str | None:
    """Why TensorBoard cannot be started from this interpreter, or None when it can."""
    try:
        import tensorboard  # noqa: F401  (only whether it imports)
    except ImportError:
        return MISSING
    return None


def free_port(host: str = HOST) -> int:
    """A TCP port nothing listens on now (the OS picks it; TensorBoard binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def tensorboard_command(logdir: Path, port: int, python: str | None = None) -> list[str]:
    return [python or sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", HOST,
            "--port", str(port)]


class TensorBoard:
    """One TensorBoard process serving one run's ``tb/`` folder."""

    def __init__(self, run_dir: Path, port: int | None = None):
        self.run_dir = Path(run_dir)
        self.logdir = RunDir(run_dir).tensorboard
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None
        self._output: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start TensorBoard (it takes some seconds to answer: see ``wait_ready``)."""
        reason = missing_reason()
        if reason:
            raise TensorBoardError(reason)
        if not self.logdir.is_dir():
            raise TensorBoardError(f"{self.run_dir.name} has no TensorBoard logs ({self.logdir.name}/ is missing): "
                                   "baselines and runs that never trained write none")
        self.port = self.port or free_port()
        self._output = tempfile.TemporaryFile()
        flags = CREATE_NO_WINDOW if sys.platform.startswith("win") else 0  # no console window pops up
        self.proc = subprocess.Popen(tensorboard_command(self.logdir, self.port), stdin=subprocess.DEVNULL,
                                     stdout=self._output, stderr=subprocess.STDOUT, creationflags=flags)

    def wait_ready(self, timeout: float = 90.0) -> str:
        """Wait until TensorBoard accepts connections; returns its URL (raises if it ended or never answered)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise TensorBoardError(f"TensorBoard ended before it answered: {self.output_tail()}")
            try:
                with socket.create_connection((HOST, int(self.port or 0)), timeout=1.0):
                    return self.url
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise TensorBoardError(f"TensorBoard did not answer on {self.url} within {timeout:g} s: {self.output_tail()}")

    def output_tail(self, lines: int = 5) -> str:
        if self._output is None:
            return ""
        self._output.seek(0)
        text = self._output.read().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(text[-lines:]) or "no output"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            terminate_tree(self.proc.pid)
            self.proc.wait(10)
        if self._output is not None:
            self._output.close()
            self._output = None
