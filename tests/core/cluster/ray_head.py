"""A real local Ray head for the tests: started once per module that uses it (``conftest.ray_head``) with the
venv's ``ray``, stopped at the module's end.

Ports are free ones picked here (another copy of the suite may run a head at the same time), the
temp folder is the head's own, and the stop ends exactly the processes that name that folder:
never ``ray stop``, which would end every Ray process of the machine.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 180.0


@dataclass
class RayHead:
    address: str  # the dashboard: what --ray takes
    temp_dir: Path
    home: Path  # RLPANEL_HOME of the jobs' processes
    process: subprocess.Popen[bytes]


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def start_head(log: Path) -> RayHead:
    ray_bin = Path(sys.executable).with_name("ray")
    temp_dir = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: Ray's unix sockets live in it
    home = Path(tempfile.mkdtemp(prefix="rlpanel-ray-home-"))
    gcs, dashboard, client, agent = free_ports(4)
    env = {**os.environ, "RLPANEL_HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0",
           # the jobs' "python" is this venv's: the nodes' python is whatever their PATH finds first
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    cmd = [str(ray_bin), "start", "--head", "--block", "--num-cpus", "2", "--include-dashboard=true",
           "--dashboard-host", "127.0.0.1", "--dashboard-port", str(dashboard), "--port", str(gcs),
           "--ray-client-server-port", str(client), "--dashboard-agent-listen-port", str(agent),
           "--temp-dir", str(temp_dir), "--object-store-memory", "100000000", "--disable-usage-stats"]
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                cwd=tempfile.gettempdir())
    head = RayHead(f"http://127.0.0.1:{dashboard}", temp_dir, home, proc)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            stop_head(head)
            raise RuntimeError(f"ray start exited with {proc.returncode}: {log.read_text(encoding='utf-8')[-2000:]}")
        if _jobs_run(head):
            return head
        time.sleep(1.0)
    stop_head(head)
    tail = log.read_text(encoding="utf-8")[-2000:]
    raise RuntimeError(f"the Ray head's dashboard did not answer within {START_TIMEOUT_S:g} s: {tail}")


def _jobs_run(head: RayHead) -> bool:
    """Whether the head runs a job to its end (the dashboard answers before its job agent is ready)."""
    try:
        with urllib.request.urlopen(f"{head.address}/api/version", timeout=5) as resp:
            if resp.status != 200:
                return False
        from ray.job_submission import JobSubmissionClient

        client = JobSubmissionClient(head.address)
        job = client.submit_job(entrypoint="true")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            status = str(client.get_job_status(job).value)
            if status in ("SUCCEEDED", "FAILED", "STOPPED"):
                return status == "SUCCEEDED"
            time.sleep(0.5)
    except Exception:  # noqa: BLE001 - not ready yet
        return False
    return False


def _head_processes(head: RayHead) -> list:
    import psutil

    marker = str(head.temp_dir)
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            if marker in " ".join(proc.info["cmdline"] or []) and proc.pid != os.getpid():
                found.append(proc)
        except psutil.Error:
            continue
    return found


def stop_head(head: RayHead) -> None:
    """End the head (SIGTERM to its ``ray start --block``, which stops what it started), then what names its folder."""
    import psutil

    try:
        os.killpg(head.process.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        head.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        head.process.kill()
    leftovers = _head_processes(head)
    for proc in leftovers:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(leftovers, timeout=10)
    shutil.rmtree(head.temp_dir, ignore_errors=True)
    shutil.rmtree(head.home, ignore_errors=True)
