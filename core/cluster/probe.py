"""``python -m core.cluster.probe --token FILE --back FOLDER``: ``rlpanel doctor --ray``'s job, run inside the cluster.

It joins the cluster (``ray.init()``: a job's entrypoint finds its cluster), then runs one small
task on every alive node, pinned there, that reports the node's Python and the versions of
rlpanel's key packages, reads the token file the laptop wrote in the runs folder and writes one
back (``FOLDER/<node ip>.txt``). It prints one line, ``RLPANEL_PROBE {json}``, which doctor reads
from the job's logs. It imports no torch (package versions come from their metadata).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import platform
import socket
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

MARK = "RLPANEL_PROBE "
PACKAGES = ("rlpanel", "ray", "torch", "stable-baselines3", "gymnasium")
TASK_TIMEOUT_S = 120.0


def package_versions() -> dict[str, str | None]:
    """The installed versions of the packages a run needs (None: not installed), from their metadata."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def node_facts(token_file: str, back_folder: str, node_ip: str) -> dict[str, Any]:
    """What one node says: its python, package versions, and whether it sees the runs folder."""
    facts: dict[str, Any] = {"ip": node_ip, "host": socket.gethostname(), "python": platform.python_version(),
                             "executable": sys.executable, "packages": package_versions()}
    try:
        facts["token"] = Path(token_file).read_text(encoding="utf-8").strip()
    except OSError as exc:
        facts["token_error"] = f"{type(exc).__name__}: {exc.strerror or exc}"
    try:
        back = Path(back_folder)
        back.mkdir(parents=True, exist_ok=True)
        (back / f"{node_ip}.txt").write_text(facts.get("token") or "", encoding="utf-8")
        facts["wrote"] = True
    except OSError as exc:
        facts["write_error"] = f"{type(exc).__name__}: {exc.strerror or exc}"
    return facts


def probe(token_file: str, back_folder: str) -> dict[str, Any]:
    # as Any: ray's own annotations are partial, and they differ between its versions (>= 2.9 is supported)
    ray: Any = importlib.import_module("ray")
    strategies: Any = importlib.import_module("ray.util.scheduling_strategies")
    NodeAffinitySchedulingStrategy = strategies.NodeAffinitySchedulingStrategy  # noqa: N806 - ray's class

    ray.init(logging_level=logging.ERROR, log_to_driver=False)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    remote = ray.remote(num_cpus=0)(node_facts)
    refs = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n["NodeID"], soft=False))
            .remote(token_file, back_folder, str(n.get("NodeManagerAddress"))) for n in nodes]
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=TASK_TIMEOUT_S)
    results = []
    for node, ref in zip(nodes, refs, strict=True):
        if ref in ready:
            try:
                results.append(ray.get(ref))
            except Exception as exc:  # noqa: BLE001 - the node's task failed: say so, with the others' facts
                results.append({"ip": node.get("NodeManagerAddress"), "error": str(exc).splitlines()[-1][:300]})
        else:
            results.append({"ip": node.get("NodeManagerAddress"),
                            "error": f"its task did not run within {TASK_TIMEOUT_S:g} s (the node is busy or unreachable)"})
    return {"resources": {k: float(v) for k, v in ray.cluster_resources().items() if "node:" not in k},
            "nodes": results, "dead_nodes": sum(1 for n in ray.nodes() if not n.get("Alive"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.cluster.probe")
    parser.add_argument("--token", required=True, help="the token file the laptop wrote, as the nodes see it")
    parser.add_argument("--back", required=True, help="the folder each node writes its token back to")
    args = parser.parse_args(argv)
    print(MARK + json.dumps(probe(args.token, args.back)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
