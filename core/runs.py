"""The run store: one folder per run (DESIGN.md "The run directory").

The worker writes a run; everyone else reads it. ``status.json`` is replaced atomically; a run
whose status says it is active but whose worker process is gone reads as ``crashed``.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from core.config.algorithms import BASELINES
from core.config.errors import ConfigError, FieldIssue
from core.config.schema import RunConfig
from core.util.files import read_json, write_atomic, write_json_atomic
from core.util.jsonl import tail_jsonl
from core.util.procs import is_alive, process_identity
from core.util.text import safe_name

ACTIVE = ("queued", "starting", "running", "stopping")
TERMINAL = ("finished", "stopped", "failed", "crashed")
RESUMABLE = ("stopped", "failed", "crashed")
STARTING_GRACE_S = 120.0  # a run "starting" with no worker pid after this long never started


# --- status.json ---------------------------------------------------------------------------

def read_status(run_dir: Path) -> dict[str, Any]:
    """The run's status, with ``state`` turned to ``crashed`` when its worker is gone."""
    status = read_json(Path(run_dir) / "status.json", default=None) or {"state": "unknown"}
    state = status.get("state")
    if state in ("starting", "running", "stopping") and status.get("host", socket.gethostname()) == socket.gethostname():
        pid = status.get("pid")
        if pid is None:
            since = status.get("updated_at", 0)
            if state != "starting" or time.time() - since > STARTING_GRACE_S:
                status = {**status, "state": "crashed", "recorded_state": state,
                          "error": status.get("error") or {"message": "the worker never started (see worker.log)"}}
        elif not is_alive(pid, status.get("pid_create_time")):
            status = {**status, "state": "crashed", "recorded_state": state,
                      "error": status.get("error") or {"message": f"the worker (pid {pid}) ended without a word; see worker.log"}}
    return status


def write_status(run_dir: Path, **changes: Any) -> dict[str, Any]:
    """Update status.json atomically; only the run's single writer calls this."""
    path = Path(run_dir) / "status.json"
    status = read_json(path, default=None) or {}
    status.update(changes)
    status["updated_at"] = time.time()
    write_json_atomic(path, status)
    return status


def request_stop(run_dir: Path, reason: str = "requested") -> None:
    """Ask the worker for a graceful stop (it checks about once a second)."""
    write_atomic(Path(run_dir) / "STOP", f"{reason} at {datetime.now().isoformat(timespec='seconds')}\n")


# --- run ids ---------------------------------------------------------------------------------

def make_run_id(cfg: RunConfig, when: datetime | None = None) -> str:
    """``20261122-043012-ppo-cartpole-v1-name``: time, algo, env, name; safe as a folder name."""
    when = when or datetime.now()
    parts = [when.strftime("%Y%m%d-%H%M%S"), cfg.algo.lower(), safe_name(cfg.env.label, 32)]
    if cfg.name:
        parts.append(safe_name(cfg.name, 32))
    return "-".join(p for p in parts if p)


@dataclass
class RunInfo:
    """What the runs list shows about one run, read cheaply from its folder."""

    id: str
    path: Path
    state: str
    algo: str = ""
    env: str = ""
    name: str | None = None
    preset: str | None = None
    steps: int = 0
    total: int = 0
    mean_reward: float | None = None
    episodes: int | None = None
    created_at: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    pid: int | None = None
    error: dict | None = None
    status: dict = field(default_factory=dict, repr=False)

    @property
    def age_s(self) -> float:
        return time.time() - (self.started_at or self.created_at or time.time())

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("status")
        out["path"] = str(self.path)
        return out


class RunStore:
    """The runs folder: create runs, list them, find one by id."""

    def __init__(self, root: Path):
        self.root = Path(root).expanduser()

    def create(self, cfg: RunConfig, preset: str | None = None, warnings: list[str] | tuple = (),
               extra_status: dict[str, Any] | None = None) -> Path:
        """A new run folder holding the resolved config and status ``queued``."""
        self.root.mkdir(parents=True, exist_ok=True)
        base = make_run_id(cfg)
        for n in range(1000):
            run_id = base if n == 0 else f"{base}-{n + 1}"
            path = self.root / run_id
            try:
                path.mkdir()
                break
            except FileExistsError:
                continue
        else:
            raise ConfigError([FieldIssue("name", f"could not find a free run id for {base!r}")])
        write_atomic(path / "config.yaml", cfg.to_yaml())
        write_json_atomic(path / "status.json", {
            "state": "queued", "id": run_id, "preset": preset, "created_at": time.time(), "updated_at": time.time(),
            "warnings": list(warnings), "pid": None, "host": socket.gethostname(), **(extra_status or {})})
        return path

    def path(self, run_id: str) -> Path:
        """The folder of ``run_id`` (a unique prefix is enough); never outside the root."""
        clean = Path(run_id).name
        if clean != run_id or clean in ("", ".", ".."):
            raise KeyError(f"{run_id!r} is not a run id")
        exact = self.root / clean
        if (exact / "config.yaml").is_file():
            return exact
        matches = [p for p in self._run_dirs() if p.name.startswith(clean)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise KeyError(f"no run {run_id!r} in {self.root}")
        raise KeyError(f"{run_id!r} matches {len(matches)} runs; give more of the id")

    def _run_dirs(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return [p for p in self.root.iterdir() if (p / "config.yaml").is_file()]

    def list(self) -> list[RunInfo]:
        """Every run, newest first."""
        infos = [run_info(p) for p in self._run_dirs()]
        return sorted(infos, key=lambda i: i.created_at or 0, reverse=True)

    def active(self) -> list[RunInfo]:
        return [i for i in self.list() if i.state in ACTIVE]


def latest_checkpoint(run_dir: Path) -> dict[str, Any] | None:
    """The newest complete checkpoint (``step``, ``model``, ``replay_buffer``, ``vecnormalize``)."""
    return read_json(Path(run_dir) / "checkpoints" / "latest.json", default=None)


def load_run_config(run_dir: Path) -> RunConfig:
    from core.config.validate import validate_config

    raw = yaml.safe_load((Path(run_dir) / "config.yaml").read_text(encoding="utf-8"))
    return validate_config(raw, source=str(Path(run_dir) / "config.yaml")).config


def run_info(run_dir: Path) -> RunInfo:
    """A run's list entry: status, config basics, and progress from the tail of its metrics."""
    run_dir = Path(run_dir)
    status = read_status(run_dir)
    try:
        raw = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        raw = {}
    env = raw.get("env") or {}
    info = RunInfo(
        id=run_dir.name, path=run_dir, state=status.get("state", "unknown"), algo=str(raw.get("algo", "")),
        env=str(env.get("id") or env.get("entry_point") or ""), name=raw.get("name"), preset=status.get("preset"),
        total=0 if raw.get("algo") in BASELINES else int((raw.get("budget") or {}).get("total_timesteps", 0)), created_at=status.get("created_at"),
        started_at=status.get("started_at"), ended_at=status.get("ended_at"), pid=status.get("pid"),
        error=status.get("error"), status=status)
    summary = read_json(run_dir / "summary.json", default=None)
    if summary and info.state in TERMINAL:
        info.steps = int(summary.get("timesteps") or 0)
        info.mean_reward = summary.get("final_mean_reward")
        info.episodes = summary.get("episodes")
        return info
    rewards: list[float] = []
    for rec in tail_jsonl(run_dir / "metrics.jsonl"):
        kind = rec.get("kind")
        if kind in ("progress", "episode", "train"):
            info.steps = max(info.steps, int(rec.get("step", 0)))
        if kind == "progress" and rec.get("total"):
            info.total = int(rec["total"])
        if kind == "episode":
            rewards.append(float(rec["reward"]))
    if rewards:
        info.mean_reward = sum(rewards[-100:]) / len(rewards[-100:])
    return info


class RunLock:
    """One writer per run: a lock file naming its holder's pid and start time.

    A lock left by a dead process (``kill -9``) is stale and taken over.
    """

    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / "worker.lock"

    def acquire(self) -> None:
        ident = process_identity()
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = read_json(self.path, default={}) or {}
                if is_alive(holder.get("pid"), holder.get("pid_create_time")) and holder.get("pid") != ident["pid"]:
                    raise RuntimeError(f"run {self.path.parent.name} is already being written by pid {holder.get('pid')}") from None
                self.path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(json.dumps(ident))
            return
        raise RuntimeError(f"could not lock {self.path}")

    def release(self) -> None:
        holder = read_json(self.path, default={}) or {}
        if holder.get("pid") == os.getpid():
            self.path.unlink(missing_ok=True)
