"""The night's plan: jobs run in order as slots free up, respecting ``after`` and the fit estimate.

A plan is YAML (data, never code). Its state lives in ``<runs>/.queue/state.json`` (atomic
replace), so the window shows it and re-attaches, and a runner that crashed is restarted where
it was: every job records its run id before its worker starts, and a job whose run folder
exists is adopted, never launched twice.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.config.algorithms import normalize_algo
from core.config.dotted import set_path
from core.config.errors import ConfigError, FieldIssue
from core.config.presets import resolve_raw
from core.config.schema import RunConfig
from core.config.validate import validate_config
from core.run.lock import RunLock
from core.run.states import TERMINAL
from core.run.status import read_status
from core.util.files import read_json, write_json_atomic
from core.util.procs import is_alive, spawn_detached
from core.util.yaml_reader import read_yaml_mapping

WAITING, LAUNCHING, RUNNING = "waiting", "launching", "running"
RUNNER_START_GRACE_S = 60.0
JOB_ENDED = ("finished", "stopped", "failed", "crashed", "skipped", "cancelled")


class PlanJob(BaseModel):
    """One job: a preset and overrides, like ``rlpanel train``'s options."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$", description="unique within the plan; part of the run id")
    preset: str | None = None
    algo: str | None = None
    env: str | None = Field(None, description="gymnasium id or 'package.module:Class'")
    timesteps: int | None = Field(None, ge=1)
    episodes: int | None = Field(None, ge=1, description="for the random / constant baselines")
    set: dict[str, Any] = Field(default_factory=dict, description="--set paths and values")
    after: list[str] = Field(default_factory=list, description="jobs that must have ended first")

    def config(self) -> RunConfig:
        """The job's validated run config."""
        over = {"name": self.name, **self.overrides()}
        return validate_config(resolve_raw(self.preset, over), source=f"job {self.name}").config

    def overrides(self) -> dict[str, Any]:
        """What the job changes over its preset, as a nested raw config (not validated)."""
        over: dict[str, Any] = {}
        for path, value in self.set.items():
            over = set_path(over, path, value)
        if self.algo:
            over["algo"] = normalize_algo(self.algo)
        if self.env:
            over["env"] = {"entry_point": self.env, "id": None} if ":" in self.env else {"id": self.env, "entry_point": None}
        if self.timesteps:
            over = set_path(over, "budget.total_timesteps", self.timesteps)
        if self.episodes:
            over = set_path(over, "budget.episodes", self.episodes)
        return over


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    parallel: int = Field(1, ge=1, le=64, description="jobs at once")
    on_failure: Literal["continue", "stop"] = "continue"
    jobs: list[PlanJob] = Field(min_length=1)

    @model_validator(mode="after")
    def _names_and_order(self) -> Plan:
        names = [j.name for j in self.jobs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"job names must be unique; repeated: {', '.join(dupes)}")
        for job in self.jobs:
            unknown = [a for a in job.after if a not in names]
            if unknown:
                raise ValueError(f"job {job.name}: after names unknown jobs {unknown}; known: {names}")
            if job.name in job.after:
                raise ValueError(f"job {job.name} cannot run after itself")
        _check_cycles({j.name: j.after for j in self.jobs})
        return self


def _check_cycles(deps: dict[str, list[str]]) -> None:
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 1:
            raise ValueError(f"the after: links form a cycle: {' -> '.join([*path, name])}")
        if state.get(name) == 2:
            return
        state[name] = 1
        for dep in deps[name]:
            visit(dep, [*path, name])
        state[name] = 2

    for name in deps:
        visit(name, [])


def load_plan(path: Path) -> Plan:
    """Read and validate a plan file; every job's config is validated too."""
    try:
        raw = read_yaml_mapping(Path(path))
    except ValueError as exc:
        raise ConfigError([FieldIssue("plan", str(exc))]) from None
    return parse_plan(raw, str(path))


def parse_plan(raw: Any, source: str = "plan") -> Plan:
    if not isinstance(raw, dict):
        raise ConfigError([FieldIssue("plan", "a plan is a mapping with parallel, on_failure and jobs")], source)
    try:
        plan = Plan.model_validate(raw)
    except ValidationError as exc:
        issues = [FieldIssue(".".join(str(p) for p in e["loc"]), e["msg"].removeprefix("Value error, ")) for e in exc.errors()]
        raise ConfigError(issues, source) from None
    problems: list[FieldIssue] = []
    for i, job in enumerate(plan.jobs):
        try:
            job.config()
        except ConfigError as exc:
            problems += [FieldIssue(f"jobs.{i}({job.name}).{issue.path}", issue.message) for issue in exc.issues]
    if problems:
        raise ConfigError(problems, source)
    return plan


# --- state ---------------------------------------------------------------------------------

def queue_dir(runs_dir: Path) -> Path:
    return Path(runs_dir) / ".queue"


def new_state(plan: Plan, plan_path: str) -> dict[str, Any]:
    return {"id": time.strftime("%Y%m%d-%H%M%S"), "plan_path": plan_path, "plan": plan.model_dump(mode="json"),
            "state": "running", "created_at": time.time(), "runner": None,
            "jobs": [{"name": j.name, "status": WAITING, "run_id": None, "reason": None, "started_at": None, "ended_at": None}
                     for j in plan.jobs]}


def read_queue(runs_dir: Path) -> dict[str, Any] | None:
    """The queue's state, with ``state`` turned to ``crashed`` when its runner is gone."""
    state = read_json(queue_dir(runs_dir) / "state.json", default=None)
    if state and state.get("state") in ("running", "cancelling"):
        # the runner holds .queue/worker.lock while it lives; a just-launched one gets a grace period
        holder = read_json(RunLock(queue_dir(runs_dir)).path, default=None) or {}
        alive = is_alive(holder.get("pid"), holder.get("pid_create_time"))
        starting = not state.get("runner") and time.time() - float(state.get("launched_at") or 0) < RUNNER_START_GRACE_S
        if not alive and not starting:
            state = {**state, "state": "crashed", "recorded_state": state["state"]}
    return state


def write_queue(runs_dir: Path, state: dict[str, Any]) -> None:
    state["updated_at"] = time.time()
    queue_dir(runs_dir).mkdir(parents=True, exist_ok=True)
    write_json_atomic(queue_dir(runs_dir) / "state.json", state)


def request_cancel(runs_dir: Path, stop_running: bool = False) -> None:
    folder = queue_dir(runs_dir)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "CANCEL").write_text("stop-running\n" if stop_running else "\n")


class QueueBusy(RuntimeError):
    """A queue is still running in this runs folder: one at a time."""


def is_active(state: dict[str, Any] | None) -> bool:
    return bool(state) and state["state"] in ("running", "cancelling")


def save_plan(plan: Plan, path: Path) -> None:
    """Write a plan as readable YAML: only what differs from the defaults, in the schema's order."""
    data = plan.model_dump(mode="json", exclude_defaults=True)
    data = {"parallel": plan.parallel, "on_failure": plan.on_failure, **data}
    data["jobs"] = [{k: v for k, v in job.items() if v not in (None, [], {})} for job in data["jobs"]]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=110), encoding="utf-8")


def start_queue(runs_dir: Path, plan: Plan, plan_path: Path | None = None, restart: bool = False,
                reap: bool = False) -> tuple[dict[str, Any], str]:
    """Start ``plan`` in ``runs_dir`` with a detached runner; returns (state, what happened).

    The same plan after its runner crashed continues where it was (unless ``restart``). Without a
    ``plan_path`` the plan is written to ``<runs>/.queue/plan.yaml``. ``reap`` waits for the
    runner from a thread of this process (for a long-lived caller such as the window).
    Raises ``QueueBusy`` while another queue runs here.
    """
    root = Path(runs_dir)
    current = read_queue(root)
    same = current is not None and current.get("plan") == plan.model_dump(mode="json")
    if is_active(current):
        raise QueueBusy(f"queue {current['id']} is still running ({summary_line(current)})")
    if current and current["state"] == "crashed" and same and not restart:
        note = f"continuing queue {current['id']} where its runner stopped ({summary_line(current)})"
        state = {k: v for k, v in current.items() if k != "recorded_state"}
        state["state"] = current.get("recorded_state", "running")  # "crashed" is a reading, not a state
    else:
        if plan_path is None:
            plan_path = queue_dir(root) / "plan.yaml"
            save_plan(plan, plan_path)
        (queue_dir(root) / "CANCEL").unlink(missing_ok=True)
        state = new_state(plan, str(Path(plan_path).resolve()))
        note = f"started queue with {len(plan.jobs)} jobs, {plan.parallel} at once"
    state["launched_at"] = time.time()
    state["runner"] = None  # the runner fills it in once it holds the queue's lock
    write_queue(root, state)
    launch_queue_runner(root, reap=reap)
    return read_queue(root) or state, note


def launch_queue_runner(runs_dir: Path, reap: bool = True) -> subprocess.Popen:
    """Start the queue runner for ``runs_dir`` detached; its output goes to ``.queue/runner.log``."""
    folder = queue_dir(runs_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return spawn_detached([sys.executable, "-m", "core.queue_runner", str(runs_dir)], folder / "runner.log", reap=reap)


def cancel_queue(runs_dir: Path, stop_running: bool = False) -> dict[str, Any]:
    """Stop launching jobs (and, with ``stop_running``, ask running ones to stop); returns the state.

    A crashed queue has no runner to tell, so its waiting jobs are settled here.
    Raises ``LookupError`` when there is nothing to cancel.
    """
    state = read_queue(runs_dir)
    if state is None or state["state"] not in ("running", "cancelling", "crashed"):
        raise LookupError("no running queue to cancel")
    if state["state"] == "crashed":
        for job in state["jobs"]:
            if job["status"] == WAITING:
                job.update(status="cancelled", reason="the queue was cancelled")
        state = {k: v for k, v in state.items() if k != "recorded_state"}
        state["state"] = "cancelled"
        write_queue(runs_dir, state)
    else:
        request_cancel(runs_dir, stop_running)
    return state


# --- scheduling (one pass; the runner calls it about once a second) -----------------------------

def reconcile(runs_dir: Path, state: dict[str, Any]) -> None:
    """Bring each launched job's status up to date from its run folder."""
    for job in state["jobs"]:
        if job["status"] in (LAUNCHING, RUNNING) and job.get("run_id"):
            run_status = read_status(Path(runs_dir) / job["run_id"])
            run_state = run_status.get("state")
            if run_state in TERMINAL:
                job["status"] = run_state
                job["ended_at"] = job.get("ended_at") or time.time()
                if run_state != "finished":
                    err = run_status.get("error") or {}
                    job["reason"] = err.get("message") or run_state
            elif run_state in ("starting", "running", "stopping"):
                job["status"] = RUNNING


def ready_jobs(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Waiting jobs whose ``after`` jobs have all ended, in plan order."""
    plan = {j["name"]: j for j in state["plan"]["jobs"]}
    status = {j["name"]: j["status"] for j in state["jobs"]}
    return [j for j in state["jobs"] if j["status"] == WAITING
            and all(status[dep] in JOB_ENDED for dep in plan[j["name"]].get("after", []))]


def fits_next_to(candidate: dict[str, Any], running: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether a job's estimate fits beside the running jobs' estimates (GPU and host RAM)."""
    if not running:
        return True, ""
    gpu = sum(e["gpu_bytes"] for e in running) + candidate["gpu_bytes"]
    host = sum(e["host_bytes"] for e in running) + candidate["host_bytes"]
    if candidate["on_gpu"] and gpu > 0.95 * candidate["capacity_bytes"]:
        return False, (f"waiting: would not fit next to the running jobs on {candidate['gpu_name']} "
                       f"({gpu / 2**20:,.0f} of {candidate['capacity_bytes'] / 2**20:,.0f} MiB)")
    if host > 0.95 * candidate["host_capacity_bytes"]:
        return False, (f"waiting: would not fit next to the running jobs in host RAM "
                       f"({host / 2**20:,.0f} of {candidate['host_capacity_bytes'] / 2**20:,.0f} MiB)")
    return True, ""


def job_estimate(cfg: RunConfig) -> dict[str, Any] | None:
    try:
        from core.fit.estimate import estimate_config

        return estimate_config(cfg).to_json()
    except (ConfigError, ImportError, OSError) as exc:  # an estimate is advice; the worker decides
        return {"error": str(exc)}


def plan_job(state: dict[str, Any], name: str) -> PlanJob:
    return PlanJob.model_validate(next(j for j in state["plan"]["jobs"] if j["name"] == name))


def summary_line(state: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for job in state["jobs"]:
        counts[job["status"]] = counts.get(job["status"], 0) + 1
    return ", ".join(f"{n} {s}" for s, n in counts.items())
