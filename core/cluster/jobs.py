"""A run as a Ray job: submit it, ask where it stands, stop it, and settle a run whose job ended without a word.

The job's entrypoint is the run's supervisor (``python -m core.launch.supervisor RUN_DIR``) with
the nodes' python, so a run on the cluster ends, crashes and notifies as a local one does, in the
shared runs folder. The run's ``status.json`` records ``ray: {address, python, runs, job_id,
submitted_at, resources}`` before the job is submitted (the worker cannot start before that), so
whoever reads the run knows the job to ask about or to stop.
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.cluster.client import ClusterError, job_client, largest_node_cpus, unreachable
from core.cluster.resources import JobResources, job_resources
from core.cluster.target import ClusterTarget
from core.config.errors import ConfigError
from core.estimate.estimate import estimate_config
from core.run.layout import RunDir
from core.run.reached import resume_by_hand
from core.run.states import LIVE
from core.run.status import SUPERVISOR_MODULE, read_status, write_status
from core.run.store import load_run_config
from core.util.files import read_json
from core.util.locks import held_briefly

ENDED = ("STOPPED", "SUCCEEDED", "FAILED")
STOP_WAIT_S = 60  # after Ray's SIGTERM (the worker's graceful stop: it saves a checkpoint), Ray's SIGKILL
SUBMIT_PAUSES_S = (1.0, 3.0, 8.0)  # between tries of a submission whose connection dropped
SETTLE_GRACE_S = 30.0  # a job ended this long ago while its run still reads live: the shared folder is not just late


@dataclass(frozen=True)
class JobView:
    """A run's Ray job as the cluster reports it."""

    status: str  # PENDING, RUNNING, STOPPED, SUCCEEDED, FAILED
    message: str
    node: str | None  # the IP of the node running the entrypoint (None while pending)
    ended_at: float | None
    crashed: str | None = None  # set by settle_cluster_run when it marked the run crashed: the reason

    @property
    def ended(self) -> bool:
        return self.status in ENDED


def submission_id(run_id: str, launched_at: float) -> str:
    """The job's id on the cluster: the run's id and its launch (each attempt a new, unique submission)."""
    return f"rlpanel-{re.sub(r'[^A-Za-z0-9_-]+', '-', run_id)[:80]}-{int(launched_at * 1000)}"


def run_resources(run_dir: Path) -> JobResources:
    cfg = load_run_config(run_dir)
    try:
        estimate: dict[str, Any] | None = estimate_config(cfg).to_json()
    except (ConfigError, OSError) as exc:  # an estimate is advice: the run still asks for its CPUs
        estimate = {"error": str(exc)}
    return job_resources(cfg, estimate)


def submit_run(run_dir: Path, resume: bool = False) -> str:
    """Submit the run (status ``starting``, ``ray`` naming the target) as a Ray job; returns its id.

    A submission the cluster refuses or cannot take is recorded as the run ``failed`` with the
    reason (resumable), and raised as ``ClusterError``.
    """
    run_dir = Path(run_dir)
    status = read_status(run_dir)
    target = ClusterTarget.from_json(status.ray)
    if target is None:
        raise ClusterError(f"run {run_dir.name} names no Ray cluster in its status.json")
    job_id = submission_id(run_dir.name, status.launched_at or time.time())
    try:
        resources, cut = run_resources(run_dir).fit_node(largest_node_cpus(target.address))
        warnings = list(status.warnings)
        if cut and f"on the cluster: {cut}" not in warnings:  # the worker announces it as a warning event
            warnings.append(f"on the cluster: {cut}")
        node_dir = target.node_path(run_dir)
        entry = target.command(SUPERVISOR_MODULE, *[str(node_dir), *(["--resume"] if resume else [])])
        # the output goes to worker.log in the shared folder, as a local run's does (the Log tab reads it there)
        entry += f" >> {shlex.quote(str(node_dir / RunDir(run_dir).worker_log.name))} 2>&1"
        write_status(run_dir, ray={**target.to_json(), "job_id": job_id, "submitted_at": time.time(),
                                   "resources": resources.to_json()}, warnings=warnings)
        job = {"entrypoint": entry, "submission_id": job_id, "metadata": {"rlpanel_run": run_dir.name},
               "entrypoint_num_cpus": resources.num_cpus, "entrypoint_num_gpus": resources.num_gpus or None,
               "entrypoint_memory": resources.memory_bytes or None,
               "runtime_env": {"env_vars": {"PYTHONUNBUFFERED": "1", "RAY_JOB_STOP_WAIT_TIME_S": str(STOP_WAIT_S)}}}
        _submit_retrying(target.address, job)
    except ClusterError as exc:
        _refused(run_dir, str(exc))
        raise
    except (ConfigError, OSError, RuntimeError, ValueError) as exc:  # the job API raises RuntimeError for a refusal
        message = f"the Ray cluster at {target.address} did not take the run: {' '.join(str(exc).split())[:400]}"
        _refused(run_dir, message)
        raise ClusterError(message) from None
    return job_id


def _submit_retrying(address: str, job: dict[str, Any], pauses: tuple[float, ...] = SUBMIT_PAUSES_S) -> None:
    """Submit ``job``; a dropped connection (a dashboard restarting, a busy head) is tried again after each pause.

    The submission id is ours, so a try whose answer was lost is found again: "already exists" after
    a lost answer means the job was taken.
    """
    for attempt in range(len(pauses) + 1):
        try:
            job_client(address).submit_job(**job)
            return
        except ClusterError:
            if attempt == len(pauses):
                raise
        except RuntimeError as exc:
            if attempt and "already exists" in str(exc):
                return  # an earlier try was taken; its answer was lost
            if attempt == len(pauses) or not _transient(exc):
                raise
        time.sleep(pauses[attempt])


def _transient(exc: BaseException) -> bool:
    text = str(exc)
    return any(word in text for word in ("Connection aborted", "Connection refused", "RemoteDisconnected", "timed out",
                                         "Max retries", "502", "503", "504"))


def _refused(run_dir: Path, message: str) -> None:
    write_status(run_dir, state="failed", ended_at=time.time(), error={"message": message},
                 exit_reason=f"not submitted to the cluster: {message}")


def job_view(address: str, job_id: str) -> JobView:
    """Where the job stands; ``ClusterError`` when the cluster cannot be asked."""
    client = job_client(address)
    try:
        info = client.get_job_info(job_id)
    except Exception as exc:  # noqa: BLE001 - an HTTP error, a job the cluster forgot (a new head)
        raise ClusterError(unreachable(address, exc)) from None
    status = str(getattr(info.status, "value", info.status))
    node = None
    agent = getattr(info, "driver_agent_http_address", None) or ""
    match = re.match(r"^\w+://\[?([^\]/]+?)\]?:\d+", agent)
    if match:
        node = match.group(1)
    end = getattr(info, "end_time", None)
    return JobView(status, str(info.message or ""), node, end / 1000.0 if end else None)


def stop_job(run_dir: Path) -> bool:
    """Ask Ray to stop the run's job (SIGTERM to its processes, SIGKILL ``STOP_WAIT_S`` later); whether it was asked."""
    ray = read_status(run_dir).ray or {}
    if not ray.get("address") or not ray.get("job_id"):
        return False
    client = job_client(str(ray["address"]))
    try:
        return bool(client.stop_job(str(ray["job_id"])))
    except Exception as exc:  # noqa: BLE001 - the job is unknown to the cluster or the cluster is gone
        raise ClusterError(unreachable(str(ray["address"]), exc)) from None


def settle_cluster_run(run_dir: Path, grace_s: float = SETTLE_GRACE_S) -> JobView | None:
    """Ask Ray about a live cluster run's job; a job that ended while the run still reads live marks it ``crashed``.

    A supervisor records every end it sees; this covers the ends it cannot see (the node lost, its
    processes killed together). ``grace_s`` lets a shared folder catch up (NFS caches attributes
    for up to a minute). Returns the job's view (None when the run is not a live cluster run or
    the cluster cannot be asked: nothing is written then); its ``crashed`` is the reason when it
    marked the run (the caller notifies: no supervisor is left to).
    """
    status = read_status(run_dir)
    ray = status.ray or {}
    if status.state not in LIVE or not ray.get("job_id"):
        return None
    try:
        view = job_view(str(ray["address"]), str(ray["job_id"]))
    except ClusterError:
        return None
    if view.status == "SUCCEEDED" or not view.ended or time.time() - (view.ended_at or 0) < grace_s:
        return view  # SUCCEEDED: the worker exited 0, so it recorded its end; the folder shows it soon
    with held_briefly(RunDir(run_dir).control_lock, what=f"run {run_dir.name}"):
        raw = read_json(RunDir(run_dir).status, default=None)
        if not isinstance(raw, dict) or raw.get("state") not in LIVE or (raw.get("ray") or {}).get("job_id") != ray["job_id"]:
            return view
        why = f": {view.message}" if view.message else ""
        # nothing is planned yet: a queue runner plans an automatic resume next, and says so itself when one is due
        reason = (f"its Ray job {ray['job_id']} ended {view.status} without the run recording its end{why}; "
                  f"{resume_by_hand(run_dir)}")
        write_status(run_dir, state="crashed", ended_at=time.time(), exit_reason=reason, error={"message": reason})
    return replace(view, crashed=reason)
