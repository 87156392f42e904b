"""The runs folder: create a run, list runs, find one by id, read one cheaply for a list.

See docs/run-folder.md; user text never becomes a path outside the runs root.
"""

from __future__ import annotations

import builtins
import re
import shutil
import socket
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config.algorithms.baselines import BASELINES
from core.config.errors import ConfigError, FieldIssue
from core.config.steps import planned_steps
from core.run.annotations import read_annotations
from core.run.episodes import REWARD_WINDOW, episode_groups, last_window, weighted_mean
from core.run.layout import RunDir
from core.run.names import run_label
from core.run.records import STEP_KINDS, well_formed_only
from core.run.states import ACTIVE, BROKEN, TERMINAL
from core.run.status import RunStatus, StatusFields, new_status, read_status, stall_note
from core.run.summary_file import read_summary
from core.util.files import write_atomic, write_json_atomic
from core.util.jsonl import tail_jsonl
from core.util.paths import absolute
from core.util.text import safe_name

if TYPE_CHECKING:  # the schema (pydantic) loads with the first config read, not with the window's first frame
    from core.config.schema import RunConfig

MAX_ID_CHARS = 200  # a run id is ~60 characters; a path component may not pass 255 anywhere
ID_TRIES = 1000  # a run id taken already gets -2, -3, ... -1000 (core.run.path_length counts that suffix in)

# --- run ids ---------------------------------------------------------------------------------

def make_run_id(cfg: RunConfig, when: datetime | None = None) -> str:
    """``20261122-043012-ppo-cartpole-v1-name``: time, algo, env, name; safe as a folder name."""
    when = when or datetime.now()
    parts = [when.strftime("%Y%m%d-%H%M%S"), cfg.algo.lower(), safe_name(cfg.env.label, 32)]
    if cfg.name:
        parts.append(safe_name(cfg.name, 32))
    return "-".join(p for p in parts if p)


def run_id_base(cfg: RunConfig, id_suffix: str = "") -> str:
    """The id a new run of ``cfg`` gets, before ``-2``.. ``-1000`` when that one is taken (``RunStore.create``)."""
    return make_run_id(cfg) + (f"-{safe_name(id_suffix, 16)}" if id_suffix else "")


@dataclass
class RunInfo:
    """What the runs list shows about one run, read cheaply from its folder."""

    id: str
    path: Path
    state: str
    algo: str = ""
    engine: str = "sb3"  # runtime.engine: the library it trains with (a config from before the field: sb3)
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
    error: dict[str, Any] | None = None
    broken: str | None = None  # why the folder cannot be read as a run (state is then "broken")
    display_name: str | None = None  # the user's name for the run (annotations.json); the id stays
    tags: tuple[str, ...] = ()
    note: str = ""
    has_checkpoint: bool = False  # a complete checkpoint to resume from
    energy_kwh: float | None = None  # the GPU energy of an ended run (summary.json)
    pause_reason: str | None = None  # why a paused run is paused (the GPU guard)
    stall_note: str | None = None  # a stalled run: since when no step (core.run.status.stall_note)
    status: RunStatus = field(default_factory=RunStatus, repr=False)

    @property
    def label(self) -> str:
        """What lists call the run: the display name the user gave it, else its config name, else its id."""
        return run_label(self.id, self.display_name, self.name)

    @property
    def shown_total(self) -> int:
        """The total a list shows: the steps the run trains, never fewer than it made (ARS's updates end with episodes,
        past the budget; a run from before the planned total was recorded); 0 for none (a baseline)."""
        return max(self.total, self.steps) if self.total else 0

    def steps_text(self, joint: str = " / ") -> str:
        """``32,769 / 40,960``: the steps made of the steps it trains; the steps alone without a total."""
        return f"{self.steps:,}" + (f"{joint}{self.shown_total:,}" if self.total else "")

    @property
    def age_s(self) -> float:
        return time.time() - (self.started_at or self.created_at or time.time())

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("status")
        out["path"] = str(self.path)
        out["tags"] = list(self.tags)
        out["label"] = self.label
        out["group"] = self.status.group  # the group of seeds it was launched in: {id, seed, size, name}, or None
        return out


class RunStore:
    """The runs folder: create runs, list them, find one by id."""

    def __init__(self, root: Path):
        self.root = absolute(root)

    def create(self, cfg: RunConfig, preset: str | None = None, warnings: list[str] | tuple[str, ...] = (),
               extra_status: StatusFields | None = None, id_suffix: str = "") -> Path:
        """A new run folder holding the resolved config and status ``queued``; ``id_suffix`` ends its id (a
        seed of a group: ``s3``)."""
        self.root.mkdir(parents=True, exist_ok=True)
        base = run_id_base(cfg, id_suffix)
        for n in range(ID_TRIES):
            run_id = base if n == 0 else f"{base}-{n + 1}"
            path = self.root / run_id
            try:
                path.mkdir()
                break
            except FileExistsError:
                continue
        else:
            raise ConfigError([FieldIssue("name", f"could not find a free run id for {base!r}")])
        layout = RunDir(path)
        try:
            write_atomic(layout.config, cfg.to_yaml())
            plan = planned_steps(cfg)  # the Runs tab's total until the worker says it (a resume's, from its checkpoint)
            now = time.time()
            first: StatusFields = {"state": "queued", "id": run_id, "preset": preset, "created_at": now,
                                   "warnings": list(warnings), "pid": None, "host": socket.gethostname(),
                                   "planned_timesteps": plan.steps if plan else None}
            first.update(extra_status or {})
            write_json_atomic(layout.status, {**new_status(**first), "updated_at": now})
        except OSError:  # a full disk: no empty run folder is left behind
            shutil.rmtree(path, ignore_errors=True)
            raise
        return path

    def path(self, run_id: str) -> Path:
        """The folder of ``run_id`` (a unique prefix is enough); never outside the root."""
        if len(run_id) > MAX_ID_CHARS or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", run_id):
            shown = run_id if len(run_id) <= 60 else f"{run_id[:60]}... ({len(run_id):,} characters)"
            raise KeyError(f"{shown!r} is not a run id (letters, digits, '.', '_' and '-', at most {MAX_ID_CHARS})")
        clean = run_id
        exact = self.root / clean
        if RunDir(exact).config.is_file():
            return exact
        matches = [p for p in self._run_dirs() if p.name.startswith(clean)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise KeyError(f"no run {run_id!r} in {self.root}")
        raise KeyError(f"{run_id!r} matches {len(matches)} runs; give more of the id")

    def _run_dirs(self) -> list[Path]:
        """Folders holding a config or a status: runs, readable or not."""
        if not self.root.is_dir():
            return []
        return [p for p in self.root.iterdir()
                if not p.name.startswith(".") and (RunDir(p).config.is_file() or RunDir(p).status.is_file())]

    def list(self) -> list[RunInfo]:
        """Every run, newest first; a folder that cannot be read is listed as ``broken`` with the
        reason and never hides the others."""
        infos = []
        for path in self._run_dirs():
            try:
                infos.append(run_info(path))
            except Exception as exc:  # noqa: BLE001 - one damaged folder must not hide the others
                infos.append(RunInfo(id=path.name, path=path, state=BROKEN, broken=f"cannot be read: {type(exc).__name__}: "
                                                                                   f"{str(exc)[:200]}"))
        return sorted(infos, key=lambda i: i.created_at or 0, reverse=True)

    def active(self) -> builtins.list[RunInfo]:
        return [i for i in self.list() if i.state in ACTIVE]


def load_run_config(run_dir: Path) -> RunConfig:
    """The run's validated config; ``ConfigError`` naming ``config.yaml`` when it cannot be used."""
    from core.util.yaml_reader import read_yaml_mapping  # the YAML parser: with the first run read (after the first frame)

    path = RunDir(run_dir).config
    try:
        raw = read_yaml_mapping(path)
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError([FieldIssue("", str(exc).removeprefix(f"{path}: "))], source=str(path)) from None
    if "algo" not in raw:
        why = "is empty" if not raw else "names no algo"
        raise ConfigError([FieldIssue("", f"{why}: a run's config.yaml holds the whole config it was launched with")],
                          source=str(path))
    from core.config.validate import validate_config

    return validate_config(raw, source=str(path)).config


def unusable_config(run_dir: Path, exc: ConfigError, doing: str) -> str:
    """The line an agent tool says for a run whose config.yaml ``load_run_config`` refused (``doing``: what cannot
    be done, e.g. "evaluated"): the run, the problem, the fix."""
    name = Path(run_dir).name
    problem = str(exc).removeprefix(f"{exc.source}: ").replace(str(RunDir(run_dir).config), "config.yaml")
    if "config.yaml" not in problem:
        problem = f"config.yaml: {problem}"
    return (f"run {name} cannot be {doing}: {problem}; restore its config.yaml (the settings it was launched with) or "
            f"delete the run: rlpanel delete {name}")


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def run_info(run_dir: Path) -> RunInfo:
    """A run's list entry: status, config basics, and progress from the tail of its metrics.

    A status or config that cannot be read makes the entry ``broken`` with the reason; fields of
    the wrong type in either, or in metrics.jsonl, are ignored; a summary.json of the wrong types is read as none.
    """
    run_dir = Path(run_dir)
    layout = RunDir(run_dir)
    status = read_status(run_dir)
    broken = [status.broken] if status.broken else []
    from core.util.yaml_reader import read_yaml_mapping  # the YAML parser: with the first run read (after the first frame)

    try:
        raw = read_yaml_mapping(layout.config)
    except ValueError as exc:
        raw = {}
        broken.append(f"config.yaml: {str(exc).removeprefix(str(layout.config) + ': ')}"[:300])
    env: dict[str, Any] = raw["env"] if isinstance(raw.get("env"), dict) else {}
    budget: dict[str, Any] = raw["budget"] if isinstance(raw.get("budget"), dict) else {}
    name = raw.get("name")
    runtime: dict[str, Any] = raw["runtime"] if isinstance(raw.get("runtime"), dict) else {}
    info = RunInfo(
        id=run_dir.name, path=run_dir, state=BROKEN if broken else status.state,
        algo=str(raw.get("algo", "")), engine=str(runtime.get("engine") or "sb3"),
        env=str(env.get("id") or env.get("entry_point") or ""),
        name=name if isinstance(name, str) else None, preset=status.preset,
        # the steps the run trains (whole rollouts: the worker's figure), else what its config asked (older runs)
        total=0 if raw.get("algo") in BASELINES else status.planned_timesteps or _int(budget.get("total_timesteps")),
        created_at=status.created_at, started_at=status.started_at, ended_at=status.ended_at, pid=status.pid,
        error=status.error, broken="; ".join(broken) or None, status=status,
        has_checkpoint=layout.latest_checkpoint.is_file(),
        pause_reason=status.pause_reason if status.state == "paused" and status.pause_reason else None,
        stall_note=stall_note(status))
    notes = read_annotations(run_dir)
    info.display_name, info.tags, info.note = notes.display_name, notes.tags, notes.note
    summary = read_summary(run_dir)  # None when missing or of the wrong types: the records say it then
    if summary is not None and info.state in TERMINAL:
        info.steps = _int(summary.get("timesteps"))
        info.mean_reward = _num(summary.get("final_mean_reward"))
        info.energy_kwh = _num(summary.get("energy_kwh"))
        episodes = summary.get("episodes")
        info.episodes = episodes if isinstance(episodes, int) and not isinstance(episodes, bool) else None
        return info
    tail = well_formed_only(tail_jsonl(layout.metrics))
    for rec in tail:
        kind = rec.get("kind")
        if kind in STEP_KINDS:
            info.steps = max(info.steps, int(rec.get("step", 0)))
        if kind == "progress" and rec.get("total"):
            info.total = int(rec["total"])
    info.mean_reward = weighted_mean(last_window(episode_groups(tail), REWARD_WINDOW))
    return info
