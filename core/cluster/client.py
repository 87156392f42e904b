"""The Ray job API, imported lazily: the address a user gives, the client, and errors in words.

``ray`` is an extra (``pip install "rlpanel[ray]"``); nothing here imports it at module level, so
rlpanel without it still imports every module and only a cluster command says what is missing.
The job API talks to the head's dashboard (``http://HEAD:8265``), never to ``ray://`` (Ray Client).
"""

from __future__ import annotations

import re
import threading
from typing import Any

from core.util.imports import installed

RAY_MISSING = 'Ray is not installed here: pip install "rlpanel[ray]" (the job API needs ray[default])'
DASHBOARD_PORT = 8265
_clients: dict[str, Any] = {}  # one client per address and process: each new one asks the head for its version first
_clients_lock = threading.Lock()


class ClusterError(RuntimeError):
    """A cluster that cannot be used as asked, with the reason and the fix (one line)."""


def ray_installed() -> bool:
    """Whether ``ray`` can be imported, asked without importing it (it takes seconds): the window says so up front."""
    return installed("ray")


def require_ray() -> Any:
    """The ``ray`` module, or ``ClusterError`` naming the extra to install."""
    try:
        import ray
        import ray.job_submission  # noqa: F401 - the part rlpanel uses; [default] brings its dependencies
    except ImportError:
        raise ClusterError(RAY_MISSING) from None
    return ray


def normalize_address(text: str) -> str:
    """``HEAD``, ``HEAD:PORT`` or ``http(s)://HEAD:PORT`` as the dashboard URL the job API takes."""
    address = str(text or "").strip().rstrip("/")
    if not address:
        raise ClusterError("the Ray cluster address is empty: give the head's dashboard, e.g. --ray http://HEAD:8265")
    if address.startswith("ray://"):
        raise ClusterError(f"{address} is a Ray Client address; rlpanel submits jobs through the head's dashboard: "
                           f"--ray http://{address[6:].split(':')[0]}:{DASHBOARD_PORT}")
    if not re.match(r"^https?://", address):
        address = f"http://{address}"
    host_port = address.split("://", 1)[1]
    if not re.fullmatch(r"[A-Za-z0-9._\-\[\]:]+", host_port):
        raise ClusterError(f"{text!r} is not a cluster address: give the head's dashboard, e.g. --ray http://HEAD:8265")
    if ":" not in host_port.replace("[", "").split("]")[-1]:
        address = f"{address}:{DASHBOARD_PORT}"
    return address


def job_client(address: str) -> Any:
    """A ``JobSubmissionClient`` for the cluster at ``address``; an unreachable one is a ``ClusterError`` with the fix."""
    require_ray()
    from ray.job_submission import JobSubmissionClient

    url = normalize_address(address)
    with _clients_lock:
        if url in _clients:
            return _clients[url]
    try:
        client = JobSubmissionClient(url)
    except Exception as exc:  # noqa: BLE001 - ConnectionError, RuntimeError, ValueError: all mean "not usable"
        raise ClusterError(unreachable(url, exc)) from None
    with _clients_lock:
        _clients[url] = client
    return client


def unreachable(url: str, exc: BaseException) -> str:
    """Why the cluster at ``url`` cannot be used, and what to do."""
    detail = " ".join(str(exc).split())[:300]
    port = url.rsplit(":", 1)[-1] if re.search(r":\d+$", url) else str(DASHBOARD_PORT)
    return (f"cannot reach the Ray cluster's job API at {url} ({detail}); start the head with "
            f"'ray start --head --dashboard-host 0.0.0.0' (ray[default] on the head brings the dashboard), open its "
            f"dashboard port ({port}) to this machine, then check with: rlpanel doctor --ray {url}")


def largest_node_cpus(address: str) -> float | None:
    """The CPUs of the cluster's largest alive node, through Ray's state API on the dashboard (None when
    it does not answer: the submission goes ahead as asked)."""
    require_ray()
    try:
        from ray.util.state import list_nodes

        nodes = list_nodes(address=normalize_address(address), filters=[("state", "=", "ALIVE")], timeout=15,
                           raise_on_missing_output=False)
    except Exception:  # noqa: BLE001 - an older dashboard, a busy head: the cap is advice
        return None
    cpus = [float((getattr(node, "resources_total", None) or {}).get("CPU", 0.0)) for node in nodes]
    return max(cpus) if cpus else None

