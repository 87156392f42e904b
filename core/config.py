"""The run config: one typed schema for everything a run needs (DESIGN.md "Config").

``validate_config(raw)`` is the single entry for user data (presets, config.yaml, ``--set``,
form values): it strips keys SB3 cannot honour (with a warning saying why), validates every
field and the cross-field rules, and raises ``ConfigError`` whose issues name the field path,
the value and the fix.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from core.algo_params import ALGO_PARAMS, ON_POLICY, A2CParams, DQNParams, PPOParams, SACParams, Section, hp
from core.config_paths import del_path, get_path, merge, set_path  # noqa: F401 (part of this module's API)

SCHEMA_VERSION = 1
ALGOS = ("PPO", "A2C", "SAC", "DQN")
# Baselines play a fixed policy for budget.episodes episodes through the same worker and run
# folder, so they sit in tables and plots like any run: random actions, or the zero action.
BASELINES = ("random", "constant")
ACTIVATIONS = ("auto", "tanh", "relu", "elu", "leaky_relu", "gelu", "silu")

# Keys the users' guides put in their configs that SB3 cannot honour. They are accepted on
# import and reported, never silently dropped (DESIGN.md "Safety and bad input").
IGNORED_KEYS = {
    "use_amp": "SB3 has no mixed-precision training; every update runs in float32 (TF32 where enabled)",
    "cuda_graph_optimization": "SB3 does not capture CUDA graphs; its update loop calls kernels one by one",
    "log_interval": "rlpanel logs every update to metrics.jsonl and TensorBoard; there is nothing to tune",
}


@dataclass(frozen=True)
class FieldIssue:
    """One problem with one config field, addressed by its dotted ``--set`` path."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ConfigError(ValueError):
    """A config that cannot be used; ``issues`` lists every problem found."""

    def __init__(self, issues: list[FieldIssue], source: str = ""):
        self.issues = issues
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__(prefix + "; ".join(str(i) for i in issues))


class _CrossFieldError(ValueError):
    def __init__(self, issues: list[FieldIssue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues))


class EnvSpec(Section):
    """The environment: a registered gymnasium id, or a ``module:Class`` entry point."""

    id: str | None = hp("CartPole-v1", "Environment id", "A registered gymnasium id such as CartPole-v1.")
    entry_point: str | None = hp(None, "Entry point", "A custom env as 'package.module:Class' (imported only by the worker).")
    kwargs: dict[str, Any] = hp({}, "Env kwargs", "Keyword arguments passed to the env constructor.")

    @field_validator("entry_point")
    @classmethod
    def _entry_point(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", v):
            raise ValueError(f"entry_point {v!r} is not 'package.module:Class'")
        return v

    @model_validator(mode="after")
    def _one_of(self) -> EnvSpec:
        if self.entry_point and self.id == "CartPole-v1" and "id" not in self.model_fields_set:
            object.__setattr__(self, "id", None)
        if bool(self.id) == bool(self.entry_point):
            raise ValueError("give exactly one of env.id (a gymnasium id) or env.entry_point ('module:Class')")
        return self

    @property
    def label(self) -> str:
        return self.id or (self.entry_point or "").rsplit(":", 1)[-1]


class PolicyParams(Section):
    """The policy network shared by the algorithm's actor and critic(s)."""

    net_arch: list[int] | dict[str, list[int]] | None = hp(
        None, "Network layers", "Hidden layer sizes, e.g. [256, 256], or {pi: [...], vf: [...]} / {pi: [...], qf: [...]}; empty: SB3's default.")
    activation: Literal[ACTIVATIONS] = hp("auto", "Activation", "Hidden-layer activation; auto is SB3's (tanh on-policy, relu off-policy).")  # type: ignore[valid-type]

    @field_validator("net_arch")
    @classmethod
    def _net_arch(cls, v: Any) -> Any:
        layers = v.values() if isinstance(v, dict) else [v] if v is not None else []
        if isinstance(v, dict) and (not v or set(v) - {"pi", "vf", "qf"}):
            raise ValueError(f"net_arch keys {sorted(v)} are not valid: use pi with vf (PPO, A2C) or pi with qf (SAC)")
        for sizes in layers:
            if any(not 1 <= s <= 65536 for s in sizes):
                raise ValueError(f"net_arch layer sizes {sizes} must each be 1 to 65536")
        return v


class NormalizeParams(Section):
    obs: bool = hp(False, "Normalize observations", "VecNormalize running mean/std of observations.")
    reward: bool = hp(False, "Normalize rewards", "VecNormalize scaling of rewards by the return's std.")


class RuntimeParams(Section):
    """Where and how the worker runs."""

    n_envs: int = hp(1, "Parallel envs", "Environments stepped together per vectorised step.", "envs", ge=1, le=1024)
    vec_env: Literal["dummy", "subproc"] = hp("dummy", "Vector env", "dummy: envs in the worker process; subproc: one process per env.")
    start_method: Literal["spawn", "forkserver", "fork"] = hp("forkserver", "Start method", "How subprocess envs start (forkserver falls back to spawn on Windows).")
    device: str = hp("auto", "Device", "auto, cpu, cuda or cuda:N.")
    tf32: bool = hp(False, "TF32 matmul", "Allow TF32 on Ampere and newer (faster float32 matmuls, ~10-bit mantissa).")
    cudnn_benchmark: bool = hp(False, "cuDNN benchmark", "Let cuDNN pick the fastest kernels (helps CNN policies).")
    torch_threads: int | None = hp(None, "Torch threads", "CPU threads torch may use in the worker (empty: torch's default).", "threads", ge=1, le=256)
    seed: int | None = hp(None, "Seed", "Random seed (empty: random).", "", ge=0, le=2**32 - 1)
    normalize: NormalizeParams = Field(default_factory=NormalizeParams, title="VecNormalize")
    telemetry_hz: float = hp(5.0, "Telemetry rate", "GPU samples per second recorded by the worker (0: off).", "Hz", ge=0, le=50)

    @field_validator("device")
    @classmethod
    def _device(cls, v: str) -> str:
        if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", v):
            raise ValueError(f"device {v!r} is not valid: use auto, cpu, cuda or cuda:N")
        return v


class BudgetParams(Section):
    total_timesteps: int = hp(100_000, "Total timesteps", "Env steps to train for (all envs together).", "steps", ge=1, le=10**12)
    checkpoint_every: int = hp(50_000, "Checkpoint every", "Steps between checkpoints (0: only at the end and on stop).", "steps", ge=0)
    keep_checkpoints: int = hp(3, "Checkpoints kept", "Older checkpoints are deleted.", "", ge=1, le=1000)
    eval_every: int = hp(0, "Evaluate every", "Steps between deterministic evaluations (0: off).", "steps", ge=0)
    eval_episodes: int = hp(10, "Eval episodes", "Episodes per evaluation.", "episodes", ge=1, le=10_000)
    episodes: int = hp(20, "Baseline episodes", "Episodes a baseline (random, constant) plays; training runs use total_timesteps.", "episodes", ge=1, le=1_000_000)


class RunConfig(Section):
    """A complete, validated run config (DESIGN.md "Config file shape")."""

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str | None = hp(None, "Run name", "Optional; becomes part of the run id.")
    env: EnvSpec = Field(default_factory=EnvSpec, title="Environment")
    algo: Literal[ALGOS + BASELINES] = hp("PPO", "Algorithm", "PPO, A2C, SAC or DQN; or a baseline: random, constant (zero action).")  # type: ignore[valid-type]
    ppo: PPOParams = Field(default_factory=PPOParams, title="PPO")
    a2c: A2CParams = Field(default_factory=A2CParams, title="A2C")
    sac: SACParams = Field(default_factory=SACParams, title="SAC")
    dqn: DQNParams = Field(default_factory=DQNParams, title="DQN")
    policy: PolicyParams = Field(default_factory=PolicyParams, title="Policy network")
    runtime: RuntimeParams = Field(default_factory=RuntimeParams, title="Runtime")
    budget: BudgetParams = Field(default_factory=BudgetParams, title="Budget")
    target_gpu: str = hp("auto", "Target GPU", "A profile from configs/gpus.yaml, or auto for the detected GPU.")

    @model_validator(mode="after")
    def _cross_field(self) -> RunConfig:
        issues = cross_field_issues(self)
        if issues:
            raise _CrossFieldError(issues)
        return self

    @property
    def params(self) -> Section | None:
        """The hyperparameters of the chosen algorithm (``None`` for a baseline)."""
        return getattr(self, self.algo.lower()) if self.algo in ALGOS else None

    @property
    def is_baseline(self) -> bool:
        return self.algo in BASELINES

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


def largest_divisor(n: int, cap: int) -> int:
    """The largest divisor of ``n`` that is at least 2 and at most ``cap`` (or ``n`` if none)."""
    for d in range(min(cap, n), 1, -1):
        if n % d == 0:
            return d
    return n


def cross_field_issues(cfg: RunConfig) -> list[FieldIssue]:
    """Rules between fields of the chosen algorithm; also resolves PPO ``batch_size: auto``."""
    issues: list[FieldIssue] = []
    n_envs = cfg.runtime.n_envs
    if cfg.algo == "PPO":
        p = cfg.ppo
        rollout = n_envs * p.n_steps
        if rollout < 2:
            issues.append(FieldIssue("ppo.n_steps", "n_envs x n_steps = 1 leaves nothing to batch: use n_steps >= 2"))
        elif p.batch_size == "auto":
            object.__setattr__(p, "batch_size", largest_divisor(rollout, p.auto_batch_cap))
        elif rollout % p.batch_size:
            best = largest_divisor(rollout, p.batch_size)
            issues.append(FieldIssue(
                "ppo.batch_size",
                f"batch_size {p.batch_size} does not divide n_envs x n_steps = {n_envs} x {p.n_steps} = {rollout}: "
                f"use {best} (the largest divisor below it) or 'auto'"))
        elif p.batch_size > rollout:
            issues.append(FieldIssue("ppo.batch_size", f"batch_size {p.batch_size} exceeds the rollout {rollout}"))
    if cfg.algo in ("SAC", "DQN"):
        p = cfg.params
        section = cfg.algo.lower()
        if p.buffer_size < p.batch_size:
            issues.append(FieldIssue(f"{section}.buffer_size",
                                     f"buffer_size {p.buffer_size:,} is smaller than batch_size {p.batch_size:,}: raise it to at least {p.batch_size:,}"))
        if p.learning_starts >= cfg.budget.total_timesteps:
            issues.append(FieldIssue(f"{section}.learning_starts",
                                     f"learning_starts {p.learning_starts:,} is not below total_timesteps {cfg.budget.total_timesteps:,}: "
                                     "the model would never train; lower it or raise the budget"))
    net = cfg.policy.net_arch
    if isinstance(net, dict) and cfg.algo in ALGOS:
        allowed = {"PPO": {"pi", "vf"}, "A2C": {"pi", "vf"}, "SAC": {"pi", "qf"}, "DQN": set()}[cfg.algo]
        if set(net) - allowed or not allowed:
            want = "a plain list" if not allowed else " and ".join(sorted(allowed))
            issues.append(FieldIssue("policy.net_arch", f"{cfg.algo} takes {want} for net_arch, not keys {sorted(net)}"))
    return issues


def resolved_net_arch(cfg: RunConfig) -> dict[str, list[int]]:
    """The hidden layers of each network SB3 will build: ``pi`` and ``vf`` or ``qf``."""
    if cfg.is_baseline:
        return {}
    net = cfg.policy.net_arch
    if cfg.algo in ON_POLICY:
        net = [64, 64] if net is None else net
        return dict(net) if isinstance(net, dict) else {"pi": list(net), "vf": list(net)}
    if cfg.algo == "SAC":
        net = [256, 256] if net is None else net
        return dict(net) if isinstance(net, dict) else {"pi": list(net), "qf": list(net)}
    return {"qf": list([64, 64] if net is None else net)}


def resolved_activation(cfg: RunConfig) -> str:
    act = cfg.policy.activation
    return act if act != "auto" else ("tanh" if cfg.algo in ON_POLICY else "relu")


# --- raw data: --set paths, ignored keys ------------------------------------------------------

def parse_set(text: str) -> tuple[str, Any]:
    """``"ppo.n_epochs=20"`` -> ``("ppo.n_epochs", 20)``; values are YAML scalars or lists."""
    path, sep, value = text.partition("=")
    path = path.strip()
    if not sep or not re.fullmatch(r"[a-z_][a-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", path):
        raise ConfigError([FieldIssue(path or text, f"--set {text!r} is not PATH=VALUE, e.g. --set ppo.n_epochs=20")])
    try:
        parsed = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError as exc:
        raise ConfigError([FieldIssue(path, f"value {value!r} is not valid YAML ({exc.__class__.__name__})")]) from None
    return path, parsed


def strip_ignored(raw: dict) -> tuple[dict, list[str]]:
    """Remove keys SB3 cannot honour (top level or one section deep), with a warning each."""
    warnings: list[str] = []

    def strip(d: dict, prefix: str) -> dict:
        out = {}
        for key, value in d.items():
            if key in IGNORED_KEYS:
                warnings.append(f"{prefix}{key}: {value!r} is not applied: {IGNORED_KEYS[key]}")
            elif isinstance(value, dict) and not prefix and key != "env":
                out[key] = strip(value, f"{key}.")
            else:
                out[key] = value
        return out

    return strip(raw, ""), warnings


def issues_from_validation(exc: ValidationError) -> list[FieldIssue]:
    """Turn pydantic's errors into issues that name the field path, the value and the fix."""
    issues: list[FieldIssue] = []
    for err in exc.errors():
        original = (err.get("ctx") or {}).get("error")
        if isinstance(original, _CrossFieldError):
            issues.extend(original.issues)
            continue
        loc = [str(p) for p in err["loc"] if not _is_branch_tag(p)]
        while loc and loc[-1].isdigit():  # an item of a list: report the list
            loc.pop()
        path = ".".join(loc)
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"].startswith("int_") and _allows_auto(path):
            msg += " or 'auto'"
        if err["type"] == "extra_forbidden":
            parent, _, key = path.rpartition(".")
            msg = f"unknown setting {key!r}"
            known = _known_keys(parent)
            close = difflib.get_close_matches(key, known, n=1)
            msg += f"; did you mean {close[0]!r}?" if close else (f"; known: {', '.join(known)}" if known else "")
        elif "input" in err and err["type"] not in ("missing",) and not isinstance(err["input"], dict):
            msg = f"{err['input']!r}: {msg}"
        issues.append(FieldIssue(path, msg))
    # a union (int | 'auto') reports one error per branch: keep one per path
    seen: dict[str, FieldIssue] = {}
    for issue in issues:
        seen.setdefault(issue.path, issue)
    return list(seen.values())


def _is_branch_tag(part: Any) -> bool:
    """pydantic names union branches in ``loc`` (``int``, ``literal['auto']``): not fields."""
    return isinstance(part, str) and ("[" in part or part in ("int", "float", "str", "bool", "none"))


def normalize_algo(name: str) -> str:
    """``ppo`` -> ``PPO``, ``Random`` -> ``random``: the spelling the schema uses."""
    return name.upper() if name.upper() in ALGOS else name.lower()


def _allows_auto(path: str) -> bool:
    return path == "ppo.batch_size"


def _known_keys(parent: str) -> list[str]:
    model: Any = RunConfig
    for part in filter(None, parent.split(".")):
        info = model.model_fields.get(part)
        ann = getattr(info, "annotation", None)
        if not (isinstance(ann, type) and issubclass(ann, Section)):
            return []
        model = ann
    return list(model.model_fields)


@dataclass
class ValidatedConfig:
    config: RunConfig
    warnings: list[str] = field(default_factory=list)


def validate_config(raw: dict, source: str = "") -> ValidatedConfig:
    """Validate raw config data; raise ``ConfigError`` naming every bad field."""
    if not isinstance(raw, dict):
        raise ConfigError([FieldIssue("", f"expected a mapping of settings, got {type(raw).__name__}")], source)
    clean, warnings = strip_ignored(raw)
    for key in ("description", "base"):
        clean.pop(key, None)
    try:
        return ValidatedConfig(RunConfig.model_validate(clean), warnings)
    except ValidationError as exc:
        raise ConfigError(issues_from_validation(exc), source) from None


def check_spaces(cfg: RunConfig, action_kind: str) -> list[FieldIssue]:
    """Rules that need the env's action space (``box``, ``discrete``, ...)."""
    if cfg.algo == "SAC" and action_kind != "box":
        return [FieldIssue("algo", f"SAC needs a continuous (Box) action space; {cfg.env.label} has a {action_kind} one: use PPO, A2C or DQN")]
    if cfg.algo == "constant" and action_kind != "box":
        return [FieldIssue("algo", f"the constant baseline plays the zero action of a Box action space; {cfg.env.label} has a {action_kind} one: use the random baseline")]
    if cfg.algo == "DQN" and action_kind != "discrete":
        return [FieldIssue("algo", f"DQN needs a Discrete action space; {cfg.env.label} has a {action_kind} one: use SAC, PPO or A2C")]
    return []


__all__ = [
    "ALGO_PARAMS", "ALGOS", "BASELINES", "BudgetParams", "ConfigError", "EnvSpec", "FieldIssue", "PolicyParams",
    "RunConfig", "RuntimeParams", "ValidatedConfig", "check_spaces", "del_path", "get_path", "largest_divisor", "merge",
    "parse_set", "resolved_activation", "resolved_net_arch", "set_path", "strip_ignored",
    "normalize_algo", "validate_config",
]
