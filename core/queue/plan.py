"""A plan: the night's jobs (YAML, data, never code), each a preset and overrides like ``rlpanel train``.

``parallel`` jobs run at once; ``after`` names jobs that must have ended first. Every job's
config is validated when the plan is read. A job with ``seeds`` (``5`` or ``[3, 7, 11]``) is a group: the
queue runs one run per seed (``core.queue.state.new_state`` makes each a job of its own, ``<job>#seed<s>``),
as many at once as ``parallel`` allows, and a job ``after`` it waits for all of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.config.algorithms.registry import normalize_algo
from core.config.dotted import set_path
from core.config.errors import ConfigError, FieldIssue
from core.config.presets import resolve_raw
from core.config.schema import RunConfig
from core.config.seeds import SeedsValue, is_count, parse_seeds
from core.config.validate import choose_env, validate_config
from core.util.yaml_reader import read_yaml_mapping


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
    seeds: int | list[int] | None = Field(None, description="a group of runs: 5 is seeds 0-4, [3, 7, 11] those seeds")

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: SeedsValue) -> int | list[int] | None:
        """As written (``5`` or ``[3, 7, 11]``; ``"3,7,11"`` becomes the list), checked by the one seeds reader."""
        try:
            seeds = parse_seeds(value)
        except ConfigError as exc:
            raise ValueError(exc.issues[0].message) from None
        if seeds is None:
            return None
        return len(seeds) if is_count(value) else seeds

    @model_validator(mode="after")
    def _one_seed_setting(self) -> PlanJob:
        if self.seeds is not None and "runtime.seed" in self.set:
            raise ValueError("give seeds or set runtime.seed, not both: seeds gives each run of the group its seed")
        return self

    def seed_list(self) -> list[int] | None:
        """The seeds of the job's group, or None for a single run."""
        return parse_seeds(self.seeds)

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
            over = choose_env(over, self.env)
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


def save_plan(plan: Plan, path: Path) -> None:
    """Write a plan as readable YAML: only what differs from the defaults, in the schema's order."""
    data = plan.model_dump(mode="json", exclude_defaults=True)
    data = {"parallel": plan.parallel, "on_failure": plan.on_failure, **data}
    data["jobs"] = [{k: v for k, v in job.items() if v not in (None, [], {})} for job in data["jobs"]]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=110), encoding="utf-8")
