"""A sweep file: a base run, a search space over schema paths, the objective, and how to search.

```yaml
name: ppo-cartpole-lr
base: {preset: fast, algo: PPO, env: CartPole-v1, timesteps: 20000, set: {budget.eval_every: 2000}}
space:
  ppo.learning_rate: {log_uniform: [1.0e-5, 1.0e-3]}
  ppo.n_epochs: {int: [3, 30]}
  policy.net_arch: {choice: [[64, 64], [256, 256]]}
objective: {metric: eval_mean_reward, direction: maximize}
n_trials: 20
parallel: 2
pruner: median        # or none
seeds: 3              # a trial is a group of 3 runs (seeds 0-2; or [3, 7, 11]); default 1: one run
aggregate: mean       # or iqm: the trial's value over its runs
envs: [CartPole-v1, {id: Acrobot-v1, reference: -100}]   # instead of base.env: one objective over several envs
```

Every path of the space is checked against the config schema at its bounds and choices, so a
typo or a value out of range is refused when the file is read, naming ``space.<path>``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.config.algorithms.registry import ALGORITHMS
from core.config.dotted import set_path
from core.config.errors import ConfigError, FieldIssue
from core.config.schema import RunConfig
from core.config.seeds import parse_seeds, with_seed
from core.queue.plan import PlanJob
from core.util.yaml_reader import read_yaml_mapping

KINDS = ("log_uniform", "uniform", "int", "choice")
METRICS = ("eval_mean_reward", "episode_mean_reward")
SCALARS = (bool, int, float, str, type(None))


class Distribution(BaseModel):
    """One search dimension: ``{log_uniform: [lo, hi]}``, ``{uniform: [lo, hi]}``, ``{int: [lo, hi]}``
    or ``{choice: [a, b, ...]}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["log_uniform", "uniform", "int", "choice"]
    low: float = 0.0
    high: float = 0.0
    choices: tuple[Any, ...] = ()

    def probes(self) -> list[Any]:
        """Values checked against the schema: both bounds, or every choice."""
        if self.kind == "choice":
            return list(self.choices)
        if self.kind == "int":
            return [int(self.low), int(self.high)]
        return [self.low, self.high]

    def encoded_choices(self) -> list[Any]:
        """The choices as Optuna stores them: scalars as they are, lists and mappings as JSON text."""
        return [c if isinstance(c, SCALARS) else json.dumps(c) for c in self.choices]

    def decode(self, value: Any) -> Any:
        """A sampled value as the config takes it (a JSON-encoded choice back to its list)."""
        if self.kind == "choice":
            for raw, enc in zip(self.choices, self.encoded_choices(), strict=True):
                if enc == value:
                    return raw
            return value
        return int(value) if self.kind == "int" else float(value)

    def describe(self) -> str:
        if self.kind == "choice":
            return f"choice of {len(self.choices)}"
        low, high = (int(self.low), int(self.high)) if self.kind == "int" else (self.low, self.high)
        return f"{self.kind} [{low:g}, {high:g}]"


def parse_distribution(path: str, raw: Any) -> Distribution:
    """A space entry read from the file; ``ConfigError`` naming ``space.<path>`` and the fix."""
    where = f"space.{path}"
    example = "e.g. {log_uniform: [1.0e-5, 1.0e-3]}, {uniform: [0.9, 0.999]}, {int: [3, 30]}, {choice: [[64, 64], [256, 256]]}"
    if not isinstance(raw, dict) or len(raw) != 1 or next(iter(raw)) not in KINDS:
        raise ConfigError([FieldIssue(where, f"one of {', '.join(KINDS)} with its values, not {raw!r}: {example}")])
    kind, values = next(iter(raw.items()))
    if kind == "choice":
        if not isinstance(values, list) or not values:
            raise ConfigError([FieldIssue(where, f"choice takes a non-empty list of values, not {values!r}")])
        return Distribution(kind=kind, choices=tuple(values))
    if (not isinstance(values, list) or len(values) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in values)):
        raise ConfigError([FieldIssue(where, f"{kind} takes [low, high] numbers, not {values!r}")])
    low, high = float(values[0]), float(values[1])
    if kind == "int" and not all(isinstance(v, int) or float(v).is_integer() for v in values):
        raise ConfigError([FieldIssue(where, f"int takes whole numbers, not {values!r}")])
    if low >= high:
        raise ConfigError([FieldIssue(where, f"low {values[0]!r} must be below high {values[1]!r}")])
    if kind == "log_uniform" and low <= 0:
        raise ConfigError([FieldIssue(where, f"log_uniform needs a low above 0, not {values[0]!r}: use uniform, "
                                             "or a small positive low such as 1.0e-6")])
    return Distribution(kind=kind, low=low, high=high)


class Objective(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str = Field("eval_mean_reward", description="eval_mean_reward (the last evaluation), episode_mean_reward, "
                                                         "or info.KEY (a number of the env's info at episode ends)")
    direction: Literal["maximize", "minimize"] = "maximize"

    @field_validator("metric")
    @classmethod
    def _known(cls, value: str) -> str:
        key = value.removeprefix("info.")
        if value not in METRICS and not (value.startswith("info.") and 0 < len(key) <= 64):
            raise ValueError(f"metric {value!r} is not recorded by a run; use one of {', '.join(METRICS)}, "
                             "or info.KEY for a number the env puts in its info (e.g. info.is_success)")
        return value


class PrunerOptions(BaseModel):
    """Optuna's MedianPruner settings: trials completed before pruning starts, evaluations a trial gets first."""

    model_config = ConfigDict(extra="forbid")

    n_startup_trials: int = Field(5, ge=0, le=10_000)
    n_warmup_steps: int = Field(0, ge=0, description="env steps before a trial can be pruned")


class SweepBase(BaseModel):
    """The run every trial starts from: a preset and overrides, like a plan job."""

    model_config = ConfigDict(extra="forbid")

    preset: str | None = None
    algo: str | None = None
    env: str | None = None
    timesteps: int | None = Field(None, ge=1)
    set: dict[str, Any] = Field(default_factory=dict, description="--set paths and values")


class SweepEnv(BaseModel):
    """One env of a sweep over several: its id, and the scores its runs are normalised by (``reference``: 1;
    ``baseline``: 0, else the runs folder's baseline run of the env), as ``rlpanel export --reference`` takes them."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    reference: float | None = Field(None, allow_inf_nan=False)
    baseline: float | None = Field(None, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _from_id(cls, value: Any) -> Any:
        return {"id": value} if isinstance(value, str) else value


class SweepSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$", description="the study's name; part of run ids")
    base: SweepBase = Field(default_factory=SweepBase)
    space: dict[str, Distribution] = Field(min_length=1)
    objective: Objective = Field(default_factory=Objective)
    n_trials: int = Field(20, ge=1, le=100_000)
    parallel: int = Field(1, ge=1, le=64)
    pruner: Literal["median", "none"] = "median"
    pruner_options: PrunerOptions = Field(default_factory=PrunerOptions)
    sampler: Literal["tpe", "random"] = "tpe"
    seed: int | None = Field(None, ge=0, description="the sampler's seed (the same trials again)")
    storage: str | None = Field(None, description="an Optuna RDB URL for a study shared by machines; "
                                                  "default: a SQLite file in the runs folder")
    seeds: int | list[int] = Field(1, description="runs per trial: N (seeds 0 to N-1) or a list of seeds; "
                                                 "1: one run with the base's runtime.seed")
    aggregate: Literal["mean", "iqm"] = Field("mean", description="a trial's value over its runs")
    envs: list[SweepEnv] = Field(default_factory=list, description="several envs in one objective (instead of base.env)")

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> Any:
        try:
            parse_seeds(value)
        except ConfigError as exc:
            raise ValueError(exc.issues[0].message) from None
        return value

    @model_validator(mode="after")
    def _one_env_source(self) -> SweepSpec:
        ids = [e.id for e in self.envs]
        if self.envs and self.base.env:
            raise ValueError(f"envs: give the envs in envs or base.env, not both (base.env is {self.base.env})")
        if len(set(ids)) != len(ids):
            raise ValueError(f"envs: {next(i for i in ids if ids.count(i) > 1)} is listed twice; list each env once")
        return self

    def seed_list(self) -> list[int] | None:
        """The trial's seeds; None: one run with the base config's own ``runtime.seed`` (no group)."""
        return parse_seeds(self.seeds)

    def env_ids(self) -> list[str | None]:
        """The trial's envs; ``[None]``: the base's env."""
        return [e.id for e in self.envs] or [None]

    def group_size(self) -> int:
        return len(self.env_ids()) * len(self.seed_list() or [0])

    def job(self, number: int | None = None, env: str | None = None) -> PlanJob:
        """The base run as a plan job (its overrides and preset); ``env``: one of ``envs`` instead of the base's."""
        label = self.name if number is None else f"{self.name}-t{number}"
        return PlanJob(name=label[:48], preset=self.base.preset, algo=self.base.algo, env=env or self.base.env,
                       timesteps=self.base.timesteps, set=self.base.set)

    def raw_config(self, params: dict[str, Any], number: int | None = None, env: str | None = None) -> dict[str, Any]:
        """The trial's raw config: the base, then each sampled value at its path."""
        from core.config.presets import resolve_raw

        env = env if env is not None else self.env_ids()[0]
        job = self.job(number, env)
        raw = resolve_raw(job.preset, {"name": job.name, **job.overrides()})
        for path, value in params.items():
            raw = set_path(raw, path, value)
        return self._with_measure(raw)

    def _with_measure(self, raw: dict[str, Any]) -> dict[str, Any]:
        """An ``info.KEY`` objective is read from the episodes' measures: the trial records KEY (env.info_keys)."""
        metric = self.objective.metric
        if not metric.startswith("info."):
            return raw
        env = raw.get("env")
        keys = list((env.get("info_keys") if isinstance(env, dict) else None) or [])
        key = metric.removeprefix("info.")
        return raw if key in keys else set_path(raw, "env.info_keys", [*keys, key])

    def trial_config(self, params: dict[str, Any], number: int | None = None, env: str | None = None,
                     seed: int | None = None) -> RunConfig:
        """The validated config of one run of a trial (``params`` decoded: as the config takes them): on ``env``
        (one of ``envs``; None: the first, or the base's), with ``seed`` as its ``runtime.seed`` when given."""
        from core.config.validate import validate_config

        source = f"sweep {self.name}" + (f" trial {number}" if number is not None else "")
        config = validate_config(self.raw_config(params, number, env), source=source).config
        return config if seed is None else with_seed(config, seed)

    def decode(self, params: dict[str, Any]) -> dict[str, Any]:
        """Optuna's params (JSON text for list choices) as config values."""
        return {p: self.space[p].decode(v) for p, v in params.items() if p in self.space}

    def preset_data(self, params: dict[str, Any]) -> dict[str, Any]:
        """A preset's settings for a trial: the base's overrides and the trial's values (over ``base.preset``)."""
        data = self.job().overrides()
        for path, value in params.items():
            data = set_path(data, path, value)
        return data

    def study_name(self) -> str:
        return self.name


def _space_issues(spec: SweepSpec) -> list[FieldIssue]:
    """Every space path tried at its bounds and choices against the schema."""
    from core.config.validate import validate_config

    issues: list[FieldIssue] = []
    base = spec.raw_config({})
    algo = str(base.get("algo", ""))
    for path, dist in spec.space.items():
        head = path.split(".")[0]
        if head.upper() in ALGORITHMS and head.upper() != algo:
            issues.append(FieldIssue(f"space.{path}", f"{head} settings are ignored by {algo}: search {algo.lower()}.* "
                                                      f"instead, or set base.algo: {head.upper()}"))
            continue
        for value in dist.probes():
            try:
                validate_config(set_path(base, path, value))
            except ConfigError as exc:
                mine = [i for i in exc.issues if i.path == path or i.path.startswith(path + ".") or not i.path]
                issues += [FieldIssue(f"space.{path}", _with_value(value, i.message)) for i in (mine or exc.issues[:1])]
                break
    return issues


def _with_value(value: Any, message: str) -> str:
    return message if message.startswith(repr(value)) else f"{value!r}: {message}"


def _metric_issues(spec: SweepSpec) -> list[FieldIssue]:
    base = spec.trial_config({k: d.probes()[0] for k, d in spec.space.items()})
    needs_eval = spec.objective.metric == "eval_mean_reward" or spec.pruner == "median"
    if needs_eval and base.budget.eval_every <= 0:
        what = "objective.metric: eval_mean_reward" if spec.objective.metric == "eval_mean_reward" else "pruner: median"
        return [FieldIssue("base.set", f"{what} needs evaluations during the run: add budget.eval_every "
                                       f"(e.g. {max(1, base.budget.total_timesteps // 10):,}) to base.set")]
    if base.is_baseline:
        return [FieldIssue("base.algo", f"{base.algo} is a baseline with nothing to tune: use PPO, A2C, SAC, DQN, ...")]
    return []


def parse_sweep(raw: Any, source: str = "sweep") -> SweepSpec:
    """A validated sweep; ``ConfigError`` lists every problem, each naming its field."""
    if not isinstance(raw, dict):
        raise ConfigError([FieldIssue("sweep", "a sweep is a mapping with name, base, space, objective, n_trials, ...")],
                          source)
    space = raw.get("space")
    issues: list[FieldIssue] = []
    parsed_space: dict[str, Distribution] = {}
    if isinstance(space, dict):
        for path, entry in space.items():
            try:
                parsed_space[str(path)] = parse_distribution(str(path), entry)
            except ConfigError as exc:
                issues += exc.issues
    try:
        spec = SweepSpec.model_validate({**raw, "space": parsed_space if isinstance(space, dict) else space})
    except ValidationError as exc:
        issues += [FieldIssue(".".join(str(p) for p in e["loc"]), e["msg"].removeprefix("Value error, "))
                   for e in exc.errors() if not (issues and e["loc"][:1] == ("space",))]
        raise ConfigError(issues, source) from None
    if issues:
        raise ConfigError(issues, source)
    for n, env in enumerate(spec.env_ids()):
        try:
            spec.job(env=env).config()
        except ConfigError as exc:
            where = "base" if env is None or any(i.path != "env.id" for i in exc.issues) else f"envs[{n}]"
            raise ConfigError([FieldIssue(f"{where}.{i.path}" if i.path else where, i.message)
                               for i in exc.issues], source) from None
    issues = _space_issues(spec)
    if not issues:
        try:
            issues = _metric_issues(spec)
        except ConfigError as exc:
            issues = exc.issues
    if issues:
        raise ConfigError(issues, source)
    return spec


def load_sweep(path: Path) -> SweepSpec:
    """Read and validate a sweep file."""
    try:
        raw = read_yaml_mapping(Path(path))
    except ValueError as exc:
        raise ConfigError([FieldIssue("sweep", str(exc))]) from None
    return parse_sweep(raw, str(path))


def spec_data(spec: SweepSpec) -> dict[str, Any]:
    """The sweep as it reads in a file (what ``save_sweep`` writes and the runner reads back)."""
    data = spec.model_dump(mode="json", exclude_none=True)
    data["space"] = {p: {d.kind: list(d.choices) if d.kind == "choice" else
                         ([int(d.low), int(d.high)] if d.kind == "int" else [d.low, d.high])}
                     for p, d in spec.space.items()}
    return data

