"""The run config: one typed schema for everything a run needs (docs/config.md).

One pydantic field per setting; each algorithm's section lives in ``core.config.algorithms``.
``RunConfig`` checks the rules between fields when it is built; ``core.config.validate`` is the
single entry for user data and turns pydantic's errors into ``FieldIssue``s.
"""

from __future__ import annotations

import re
from typing import Final, Literal, TypeVar

import yaml
from pydantic import Field, field_validator, model_validator

from core.config.algorithms.a2c import A2CParams
from core.config.algorithms.ars import ARSParams
from core.config.algorithms.baselines import BASELINES
from core.config.algorithms.crossq import CrossQParams
from core.config.algorithms.ddpg import DDPGParams
from core.config.algorithms.dqn import DQNParams
from core.config.algorithms.maskable_ppo import MaskablePPOParams
from core.config.algorithms.ppo import PPOParams
from core.config.algorithms.qrdqn import QRDQNParams
from core.config.algorithms.recurrent_ppo import RecurrentPPOParams
from core.config.algorithms.registry import ALGORITHMS, ALGOS
from core.config.algorithms.sac import SACParams
from core.config.algorithms.spec import AlgoSpec
from core.config.algorithms.td3 import TD3Params
from core.config.algorithms.tqc import TQCParams
from core.config.algorithms.trpo import TRPOParams
from core.config.engines import ENGINES, engine_issues
from core.config.env_spec import RESERVED_INFO_KEYS, WRAPPER_ALIASES, EnvSpec, WrapperSpec
from core.config.errors import CrossFieldError, FieldHint, FieldIssue
from core.config.fields import GsdeParams, Section, hp
from core.config.policy_params import ACTIVATIONS, OPTIMIZERS, POLICY_KINDS, PolicyParams

# the env and policy sections live in their own modules; these names stay importable from here
__all__ = ["ACTIVATIONS", "OPTIMIZERS", "POLICY_KINDS", "RESERVED_INFO_KEYS", "WRAPPER_ALIASES", "EnvSpec",
           "PolicyParams", "WrapperSpec"]

SCHEMA_VERSION: Final = 1
S = TypeVar("S", bound=Section)


def _one_of(names: list[str]) -> str:
    """``PPO, A2C or SAC``."""
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)


# the algorithm field's help, from the table: SB3's own, then sb3-contrib's
ALGO_HELP = (f"{_one_of([n for n, spec in ALGORITHMS.items() if not spec.contrib])}; with sb3-contrib "
             f"{_one_of([n for n, spec in ALGORITHMS.items() if spec.contrib])}; or a baseline: random, constant (zero action).")
# The sections of the algorithms: ``RunConfig.params`` is one of them, so mypy checks every field read. pydantic and
# mypy need them written out, here and as RunConfig's fields: tests/core/config/test_algorithm_tables.py checks both
# against ALGORITHMS.
AlgoParams = (PPOParams | A2CParams | SACParams | DQNParams | TD3Params | DDPGParams | TQCParams | TRPOParams | ARSParams
              | RecurrentPPOParams | MaskablePPOParams | CrossQParams | QRDQNParams)


class NormalizeParams(Section):
    obs: bool = hp(False, "Normalize observations", "VecNormalize running mean/std of observations.")
    reward: bool = hp(False, "Normalize rewards", "VecNormalize scaling of rewards by the return's std.")
    gamma: float | None = hp(None, "Return discount", "Discount of the return whose std scales rewards (empty: the "
                                                      "algorithm's gamma).", "", ge=0, le=1)
    clip_obs: float = hp(10.0, "Clip observations", "Normalized observations are clipped to +- this.", "", gt=0, le=1e6)
    clip_reward: float = hp(10.0, "Clip rewards", "Normalized rewards are clipped to +- this.", "", gt=0, le=1e6)
    norm_obs_keys: list[str] | None = hp(None, "Observation keys", "Dict observations: the keys to normalize (empty: all).")


class RuntimeParams(Section):
    """Where and how the worker runs."""

    n_envs: int = hp(1, "Parallel envs", "Environments stepped together per vectorised step.", "envs", ge=1, le=1024)
    vec_env: Literal["dummy", "subproc", "subproc-sb3"] = hp(
        "dummy", "Vector env", "dummy: envs in the worker process; subproc: one lean process per env (python, numpy, "
        "gymnasium and the env: ~1/4 of SB3's memory or less); subproc-sb3: SB3's own SubprocVecEnv (each env process "
        "also imports torch and SB3).")
    start_method: Literal["spawn", "forkserver", "fork"] = hp("forkserver", "Start method",
                                                              "How subprocess envs start (forkserver falls back to spawn on "
                                                              "Windows).")
    engine: Literal[ENGINES] = hp(  # type: ignore[valid-type]
        "sb3", "Engine", "sb3: PyTorch (stable-baselines3, every algorithm and option); sbx: JAX (SBX: PPO, SAC, TD3, DDPG, "
        "DQN, TQC and CrossQ, often about 3x the steps per second; pip install \"rlpanel[jax]\").")
    device: str = hp("auto", "Device", "auto, cpu, cuda or cuda:N.")
    tf32: bool = hp(False, "TF32 matmul", "Allow TF32 on Ampere and newer (faster float32 matmuls, ~10-bit mantissa).")
    cudnn_benchmark: bool = hp(False, "cuDNN benchmark", "Let cuDNN pick the fastest kernels (helps CNN policies).")
    torch_threads: int | None = hp(None, "Torch threads",
                                   "CPU threads torch may use in the worker (empty: auto, 1 on 2 cores or fewer or on a "
                                   "GPU, else the cores the env processes leave free, at most 8).", "threads", ge=1, le=256)
    seed: int | None = hp(None, "Seed", "Random seed (empty: random).", "", ge=0, le=2**32 - 1)
    normalize: NormalizeParams = Field(default_factory=NormalizeParams, title="VecNormalize")
    telemetry_hz: float = hp(5.0, "Telemetry rate", "GPU samples per second recorded by the worker (0: off).", "Hz", ge=0, le=50)
    thermal_guard: bool = hp(True, "Thermal guard", "Pause training between steps while the GPU is too hot (at or above "
                                                    "the pause temperature for 10 s) and resume once it cooled down.")
    thermal_pause_c: int | None = hp(None, "Pause at", "GPU temperature that pauses training after 10 s (empty: 5 C below "
                                                       "the GPU's NVML slowdown threshold).", "C", ge=40, le=110)
    thermal_resume_c: int | None = hp(None, "Resume below", "A paused run resumes once the GPU is below this (empty: 15 C "
                                                            "below the slowdown threshold, or 10 C below the pause).",
                                      "C", ge=30, le=105)
    keep_awake: bool = hp(True, "Keep awake", "Ask the OS not to sleep while the run trains (released when it ends); "
                                              "closing the lid still does what the power plan says.")
    # the night's safety nets (issue 28): core.worker.watchdog and core.launch.auto_resume
    stall_after_s: float | None = hp(None, "Stalled after", "A running run that takes no step for this long is stalled "
                                                            "(empty: auto; 0: never). Auto: 5x the longest pause between "
                                                            "steps so far, at least 5 minutes.", "s", ge=0, le=7 * 86_400)
    on_stall: Literal["alert", "restart-envs", "stop"] = hp(
        "alert", "On a stall", "alert: an event and a notification; restart-envs: also replace the env processes "
        "(vec_env subproc), their episodes cut short, and train on; stop: also checkpoint and stop, so a queue goes on.")
    auto_resume: int | None = hp(None, "Auto-resume", "Resume a crashed run by itself from its newest checkpoint, at most "
                                                      "this many times (empty: auto). Auto: 2 in a queue, else 0. Never after a "
                                                      "failure that would repeat (config, NaN loss, full disk, out of memory "
                                                      "at the same step twice).", "times", ge=0, le=100)
    auto_resume_after_s: float = hp(30.0, "Resume after", "Seconds before an automatic resume, doubled for each further "
                                                          "one.", "s", ge=0, le=86_400)
    # core.sync: the run's supervisor copies it into the trackers as it trains and when it ends (issue 46)
    sync: list[Literal["mlflow", "wandb"]] = hp(
        [], "Sync to", "Trackers the run is copied into by itself, every minute and when it ends: mlflow, wandb. "
        "Where: sync.yaml in the user folder (rlpanel sync --remember writes it); each needs its extra.")

    @field_validator("device")
    @classmethod
    def _device(cls, v: str) -> str:
        if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", v):
            raise ValueError(f"device {v!r} is not valid: use auto, cpu, cuda or cuda:N")
        return v


class BudgetParams(Section):
    total_timesteps: int = hp(100_000, "Total timesteps", "Env steps to train for (all envs together).", "steps", ge=1, le=10**12)
    checkpoint_every: int = hp(50_000, "Checkpoint every",
                               "Steps between checkpoints (0: only at the end and on stop).", "steps", ge=0)
    keep_checkpoints: int = hp(3, "Checkpoints kept", "Older checkpoints are deleted.", "", ge=1, le=1000)
    checkpoint_minutes: float = hp(15.0, "Checkpoint minutes",
                                   "Also checkpoint after this many minutes of training since the last one, so a slow run "
                                   "loses at most that much (0: by steps only).", "min", ge=0, le=10_080)
    eval_every: int = hp(0, "Evaluate every", "Steps between deterministic evaluations (0: off).", "steps", ge=0)
    eval_episodes: int = hp(10, "Eval episodes", "Episodes per evaluation.", "episodes", ge=1, le=10_000)
    # the stopping rules (core.worker.stop_rules): SB3's callbacks after each evaluation, so only with eval_every
    stop_at_reward: float | None = hp(None, "Stop at eval reward",
                                      "End the run, finished, once an evaluation's mean reward reaches this (empty: "
                                      "never). Needs Evaluate every.", "")
    stop_after_evals_without_improvement: int = hp(0, "Stop if no new best in",
                                                   "End the run, finished, after this many evaluations in a row without "
                                                   "a new best mean (0: never). Needs Evaluate every.", "evals",
                                                   ge=0, le=100_000)
    stop_min_evals: int = hp(3, "Count new bests after",
                             "Evaluations before the no-new-best rule starts counting (early ones improve anyway).",
                             "evals", ge=0, le=100_000)
    episodes: int = hp(20, "Baseline episodes",
                       "Episodes a baseline (random, constant) plays; training runs use "
                       "total_timesteps.", "episodes", ge=1, le=1_000_000)


class RunConfig(Section):
    """A complete, validated run config (docs/config.md, "Config file shape")."""

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str | None = hp(None, "Run name", "Optional; becomes part of the run id.")
    env: EnvSpec = Field(default_factory=EnvSpec, title="Environment")
    algo: Literal[ALGOS + BASELINES] = hp("PPO", "Algorithm", ALGO_HELP)  # type: ignore[valid-type]
    ppo: PPOParams = Field(default_factory=PPOParams, title="PPO")
    a2c: A2CParams = Field(default_factory=A2CParams, title="A2C")
    sac: SACParams = Field(default_factory=SACParams, title="SAC")
    dqn: DQNParams = Field(default_factory=DQNParams, title="DQN")
    td3: TD3Params = Field(default_factory=TD3Params, title="TD3")
    ddpg: DDPGParams = Field(default_factory=DDPGParams, title="DDPG")
    tqc: TQCParams = Field(default_factory=TQCParams, title="TQC")
    trpo: TRPOParams = Field(default_factory=TRPOParams, title="TRPO")
    ars: ARSParams = Field(default_factory=ARSParams, title="ARS")
    recurrentppo: RecurrentPPOParams = Field(default_factory=RecurrentPPOParams, title="RecurrentPPO")
    maskableppo: MaskablePPOParams = Field(default_factory=MaskablePPOParams, title="MaskablePPO")
    crossq: CrossQParams = Field(default_factory=CrossQParams, title="CrossQ")
    qrdqn: QRDQNParams = Field(default_factory=QRDQNParams, title="QRDQN")
    policy: PolicyParams = Field(default_factory=PolicyParams, title="Policy network")
    runtime: RuntimeParams = Field(default_factory=RuntimeParams, title="Runtime")
    budget: BudgetParams = Field(default_factory=BudgetParams, title="Budget")
    target_gpu: str = hp("auto", "Target GPU", "A profile from configs/gpus.yaml, or auto for the detected GPU.")

    @model_validator(mode="after")
    def _cross_field(self) -> RunConfig:
        issues = cross_field_issues(self)
        if issues:
            raise CrossFieldError(issues)
        return self

    @property
    def spec(self) -> AlgoSpec | None:
        """The chosen algorithm's table (``None`` for a baseline)."""
        return ALGORITHMS.get(self.algo)

    @property
    def params(self) -> AlgoParams:
        """The hyperparameters of the chosen algorithm; a baseline has none (``ValueError``: ask ``spec`` first)."""
        spec = ALGORITHMS.get(self.algo)
        if spec is None:
            raise ValueError(f"{self.algo} is a baseline: it has no hyperparameters")
        params: AlgoParams = getattr(self, spec.section)  # the section the algorithm's table names
        return params

    @property
    def is_baseline(self) -> bool:
        return self.algo in BASELINES

    def with_import_folder(self, folder: str) -> RunConfig:
        """This config with a custom env's or own network's import folder recorded (see ``EnvSpec.path``)."""
        env = self.env.with_import_folder(folder, code=bool(self.policy.code))
        return self if env is self.env else self.model_copy(update={"env": env})

    def to_yaml(self) -> str:
        return str(yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False))


def resolved(cfg: RunConfig) -> RunConfig:
    """``cfg`` with its algorithm's 'auto' values resolved (PPO's ``batch_size: auto``): a new config, ``cfg``
    itself when nothing is 'auto'. ``validate_config`` returns it; the factory and the estimate call it too."""
    spec = cfg.spec
    if spec is None:
        return cfg
    params = getattr(cfg, spec.section)
    new = spec.resolve(params, cfg.runtime)
    return cfg if new is params else cfg.model_copy(update={spec.section: new})


def section_as(cfg: RunConfig, cls: type[S]) -> S:
    """The chosen algorithm's section as ``cls``: a reader that serves some tables only (a network family) says
    which once, and mypy checks its field reads; another table is a programming error (``TypeError``)."""
    p = cfg.params
    if not isinstance(p, cls):
        raise TypeError(f"{cfg.algo}'s section is {type(p).__name__}, not {cls.__name__}")
    return p


def uses_sde(cfg: RunConfig) -> bool:
    """The algorithm explores with gSDE (a table with ``GsdeParams``, ``use_sde`` on)."""
    p = cfg.params if cfg.spec is not None else None
    return isinstance(p, GsdeParams) and p.use_sde


def policy_switched(cfg: RunConfig) -> bool:
    """The section's yes/no field that picks another SB3 policy is on (``AlgoSpec.policy_switch``: ARS's
    ``linear_policy`` -> ``LinearPolicy``). The one reader of the switch: the factory, the zoo export and the warnings."""
    spec = cfg.spec
    if spec is None or spec.policy_switch is None:
        return False
    value = cfg.params.model_dump()[spec.policy_switch[1]]  # the field the table names
    return value is True


def return_gamma(cfg: RunConfig) -> float:
    """The discount of the return VecNormalize scales rewards by: the algorithm's gamma (0.99 where it has none: ARS)."""
    p = cfg.params if cfg.spec is not None else None
    return 0.99 if p is None or isinstance(p, ARSParams) else float(p.gamma)


def cross_field_issues(cfg: RunConfig) -> list[FieldIssue]:
    """Rules between fields of the chosen algorithm (its spec's rules), what its engine cannot run, and the net_arch keys
    it takes."""
    issues = thermal_issues(cfg.runtime) + stop_rule_issues(cfg.budget) + step_timeout_issues(cfg)
    spec = cfg.spec
    if spec is None:
        return issues
    issues += [issue for rule in spec.rules for issue in rule(cfg.params, cfg.runtime, cfg.budget)] + engine_issues(cfg)
    net = cfg.policy.net_arch
    if isinstance(net, dict) and (set(net) - spec.net_keys or not spec.net_keys):
        want = " and ".join(sorted(spec.net_keys)) if spec.net_keys else "a plain list"
        issues.append(FieldIssue("policy.net_arch", f"{cfg.algo} takes {want} for net_arch, not keys {sorted(net)}"))
    return issues


def thermal_issues(rt: RuntimeParams) -> list[FieldIssue]:
    """The thermal guard resumes below the temperature it pauses at."""
    pause, resume = rt.thermal_pause_c, rt.thermal_resume_c
    if pause is not None and resume is not None and resume >= pause:
        return [FieldIssue("runtime.thermal_resume_c", f"resume temperature {resume} C must be below the pause temperature "
                                                       f"{pause} C (runtime.thermal_pause_c): set it a few degrees lower")]
    return []


def step_timeout_issues(cfg: RunConfig) -> list[FieldIssue]:
    """A step time limit is kept by the lean env processes only: the others have no process of their own to replace
    (dummy) or no way to wait with a limit (SB3's SubprocVecEnv)."""
    limit, vec_env = cfg.env.step_timeout_s, cfg.runtime.vec_env
    if limit is None or vec_env == "subproc":
        return []
    return [FieldIssue("env.step_timeout_s", f"a step time limit ({limit:g} s) needs the lean env processes, not vec_env "
                                             f"{vec_env}: set runtime.vec_env: subproc, or clear env.step_timeout_s")]


def stop_rule_issues(budget: BudgetParams) -> list[FieldIssue]:
    """The stopping rules act on periodic evaluations: one without ``eval_every`` would never stop anything."""
    if budget.eval_every:
        return []
    issues = []
    if budget.stop_at_reward is not None:
        issues.append(FieldIssue("budget.stop_at_reward", f"stop_at_reward {budget.stop_at_reward:g} needs periodic "
                                 "evaluation: set budget.eval_every (Evaluate every) to a number of steps, or clear it"))
    if budget.stop_after_evals_without_improvement:
        issues.append(FieldIssue("budget.stop_after_evals_without_improvement",
                                 f"stop_after_evals_without_improvement {budget.stop_after_evals_without_improvement} needs "
                                 "periodic evaluation: set budget.eval_every (Evaluate every) to a number of steps, or set it "
                                 "to 0"))
    return issues


def config_hints(cfg: RunConfig) -> list[FieldHint]:
    """Advice on a valid config from its algorithm's table (what SB3 accepts with a warning)."""
    spec = cfg.spec
    if spec is None:
        return []
    return [hint for advice in spec.advice for hint in advice(cfg.params, cfg.runtime, cfg.budget)]


# The ``policy`` settings beyond net_arch and activation: SB3 takes each only in some policies.
POLICY_OPTIONS = ("log_std_init", "ortho_init", "use_expln", "full_std", "squash_output", "share_features_extractor",
                  "n_critics")


def unused_policy_settings(cfg: RunConfig) -> list[str]:
    """Warnings for ``policy`` settings changed from their default that the algorithm's SB3 policy does not take."""
    spec = cfg.spec
    if spec is None:
        return []
    defaults = PolicyParams()
    out = []
    switch = spec.policy_switch
    if switch is not None and policy_switched(cfg):  # ARS's LinearPolicy: no hidden layers, no activation
        out += [f"policy.{name}: {getattr(cfg.policy, name)!r} is not applied: {spec.name}'s {switch[0]} is one linear map"
                for name in ("net_arch", "activation") if getattr(cfg.policy, name) != getattr(defaults, name)]
    for name in POLICY_OPTIONS:
        value = getattr(cfg.policy, name)
        if value != getattr(defaults, name) and name not in spec.policy_keys:
            out.append(f"policy.{name}: {value!r} is not applied: {spec.name}'s policy has no {name}")
    return out


def resolved_net_arch(cfg: RunConfig, cnn: bool = False) -> dict[str, list[int]]:
    """The hidden layers of each network SB3 will build: ``pi`` and ``vf`` or ``qf``."""
    spec = cfg.spec
    if spec is None:
        return {}
    default = spec.default_cnn_net if cnn and spec.default_cnn_net else spec.default_net
    if cfg.policy.net_arch is None and spec.default_nets:  # CrossQ: its own size per network
        return {key: list(dict(spec.default_nets).get(key, default)) for key in sorted(spec.net_keys)}
    net = list(default) if cfg.policy.net_arch is None else cfg.policy.net_arch
    if isinstance(net, dict):
        return dict(net)
    return {key: list(net) for key in sorted(spec.net_keys)} if spec.net_keys else {"qf": list(net)}


def resolved_activation(cfg: RunConfig) -> str:
    act = cfg.policy.activation
    if act != "auto" or cfg.spec is None:
        return str(act)
    return cfg.spec.default_activation
