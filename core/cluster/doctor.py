"""``rlpanel doctor --ray ADDRESS``: can runs go to this cluster, and if not, what to fix (one line each).

It reaches the job API, submits one small job (``core.cluster.probe``) that reports the cluster's
resources and, from a task on every alive node, the node's Python and package versions and
whether it reads a token this machine wrote in the runs folder and writes one back. The answers
are compared with this machine's versions. Every problem is a line naming the fix.
"""

from __future__ import annotations

import json
import platform
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

from core.cluster.client import ClusterError, job_client, unreachable
from core.cluster.probe import MARK, package_versions
from core.cluster.target import ClusterTarget
from core.util.paths import absolute

PROBE_MODULE = "core.cluster.probe"
PROBE_TIMEOUT_S = 180.0
PROBE_FOLDER = ".cluster-probe"  # in the runs folder: the token and the nodes' answers, removed afterwards


def local_versions() -> dict[str, Any]:
    return {"python": platform.python_version(), "packages": package_versions()}


def cluster_report(target: ClusterTarget, runs_dir: Path, timeout: float = PROBE_TIMEOUT_S) -> dict[str, Any]:
    """``{address, ok, problems: [line], resources, nodes: [...], local}``; never raises for a cluster's fault."""
    report: dict[str, Any] = {"address": target.address, "python": target.python, "runs_dir": str(absolute(runs_dir)),
                              "node_runs_dir": str(target.node_path(absolute(runs_dir), absolute(runs_dir))),
                              "local": local_versions(), "resources": {}, "nodes": [], "problems": []}
    try:
        client = job_client(target.address)
    except ClusterError as exc:
        report["problems"].append(str(exc))
        report["ok"] = False
        return report
    runs = absolute(runs_dir)
    folder = runs / PROBE_FOLDER / secrets.token_hex(6)
    token = secrets.token_hex(16)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "token.txt").write_text(token, encoding="utf-8")
        answer = _run_probe(client, target, runs, folder, timeout, report["problems"])
        if answer is not None:
            report["resources"] = answer.get("resources") or {}
            report["nodes"] = answer.get("nodes") or []
            report["problems"] += compare(report["local"], answer, token, folder, str(runs))
    except OSError as exc:
        report["problems"].append(f"cannot write the probe's token in the runs folder {runs} ({exc}); "
                                  "give a runs folder this machine can write (--runs-dir)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        try:
            folder.parent.rmdir()  # only when no other doctor probes this folder right now
        except OSError:
            pass
    report["ok"] = not report["problems"]
    return report


def _run_probe(client: Any, target: ClusterTarget, runs: Path, folder: Path, timeout: float,
               problems: list[str]) -> dict[str, Any] | None:
    token_on_nodes = str(target.node_path(folder / "token.txt", runs))
    back_on_nodes = str(target.node_path(folder / "back", runs))
    entry = target.command(PROBE_MODULE, "--token", token_on_nodes, "--back", back_on_nodes)
    job_id = f"rlpanel-doctor-{folder.name}"
    try:
        client.submit_job(entrypoint=entry, submission_id=job_id, runtime_env={"env_vars": {"PYTHONUNBUFFERED": "1"}})
    except Exception as exc:  # noqa: BLE001 - the job API refused it (an old dashboard, a bad runtime env)
        problems.append(f"the cluster did not take the probe job ({' '.join(str(exc).split())[:300]}); "
                        "check that the head runs ray[default] with its dashboard")
        return None
    status, deadline = "PENDING", time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = str(getattr(client.get_job_status(job_id), "value", ""))
        except Exception as exc:  # noqa: BLE001
            problems.append(unreachable(target.address, exc))
            return None
        if status in ("SUCCEEDED", "FAILED", "STOPPED"):
            break
        time.sleep(0.5)
    logs = _logs(client, job_id)
    if status not in ("SUCCEEDED", "FAILED", "STOPPED"):
        try:
            client.stop_job(job_id)
        except Exception:  # noqa: BLE001 - it is being given up anyway
            pass
        problems.append(f"the probe job did not end within {timeout:g} s (status {status}): the cluster has no free "
                        "CPU for it, or its nodes cannot start Python; see 'ray status' on the head")
        return None
    for line in reversed(logs.splitlines()):
        if line.startswith(MARK):
            answer: dict[str, Any] = json.loads(line[len(MARK):])
            return answer
    problems.append(_failed_probe(target, logs))
    return None


def _logs(client: Any, job_id: str) -> str:
    try:
        return str(client.get_job_logs(job_id))
    except Exception:  # noqa: BLE001 - the logs only explain
        return ""


def _failed_probe(target: ClusterTarget, logs: str) -> str:
    if "No module named" in logs and "core" in logs:
        return (f"rlpanel is not installed for the nodes' python ({target.python}): pip install \"rlpanel[ray]\" on "
                "every node, or name the python that has it with --ray-python")
    if "not found" in logs and target.python in logs:
        return f"the nodes have no {target.python!r} command: name their python with --ray-python /path/to/python"
    tail = " | ".join(line.strip() for line in logs.splitlines()[-3:] if line.strip())[:400]
    return f"the probe job failed on the cluster: {tail or 'no output'}"


def compare(local: dict[str, Any], answer: dict[str, Any], token: str, folder: Path, runs: str) -> list[str]:
    """The problems in the nodes' answers: versions that differ from here, a runs folder a node cannot see."""
    problems: list[str] = []
    nodes = answer.get("nodes") or []
    if not nodes:
        problems.append("the cluster reports no alive node: start one with 'ray start --address HEAD:6379'")
    for node in nodes:
        where = f"node {node.get('ip')} ({node.get('host', '?')})"
        if node.get("error"):
            problems.append(f"{where}: {node['error']}")
            continue
        if str(node.get("python", "")).rsplit(".", 1)[0] != local["python"].rsplit(".", 1)[0]:
            problems.append(f"{where}: Python {node.get('python')} there, {local['python']} here: use the same "
                            "minor version on both (a venv of that Python on the nodes, named with --ray-python)")
        for name, here in local["packages"].items():
            there = (node.get("packages") or {}).get(name)
            if there is None:
                problems.append(f"{where}: {name} is not installed for {node.get('executable')}: "
                                f"pip install \"{'rlpanel[ray]' if name == 'rlpanel' else name}=={here}\" there")
            elif here is not None and there != here:
                problems.append(f"{where}: {name} {there} there, {here} here: install the same version on both "
                                f"(pip install \"{name}=={here}\")")
        if node.get("token") != token:
            why = node.get("token_error") or "it read another file"
            problems.append(f"{where}: cannot read the runs folder ({why}): mount the folder {runs} on every node "
                            "(NFS, SMB) and give its path there with --ray-runs")
        elif not (folder / "back" / f"{node.get('ip')}.txt").is_file():
            why = node.get("write_error") or "its file did not appear here"
            problems.append(f"{where}: cannot write to the runs folder ({why}): mount it read-write on the nodes")
    return problems


def format_cluster_report(report: dict[str, Any]) -> str:
    lines = [f"ray cluster {report['address']} (nodes' python: {report['python']}; runs folder there: "
             f"{report['node_runs_dir']})"]
    res = report.get("resources") or {}
    if res:
        mem = res.get("memory", 0) / 2**30
        lines.append(f"resources   {res.get('CPU', 0):g} CPU, {res.get('GPU', 0):g} GPU, {mem:,.1f} GiB memory")
    for node in report.get("nodes") or []:
        if not node.get("error"):
            pk = node.get("packages") or {}
            lines.append(f"node        {node.get('ip')} ({node.get('host')}): Python {node.get('python')}, "
                         + ", ".join(f"{k} {v or 'missing'}" for k, v in pk.items()))
    local = report["local"]
    lines.append(f"here        Python {local['python']}, " + ", ".join(f"{k} {v or 'missing'}"
                                                                       for k, v in local["packages"].items()))
    if report["problems"]:
        lines += [f"PROBLEM     {p}" for p in report["problems"]]
    else:
        lines.append("ok          runs can go to this cluster: it answers, its nodes match here and see the runs folder")
    return "\n".join(lines)
