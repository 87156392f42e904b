"""The env's observation and action spaces, found without importing torch.

The fit estimate needs shapes and dtypes only. A registered gymnasium id is created in-process
(gymnasium does not import torch) and cached per ``(id, kwargs)``. A ``module:Class`` entry
point is user code, which only the worker may import in-process (docs/safety.md): it is
probed in a subprocess, ``python -m core.config.space_probe --env JSON`` (so is an env with wrappers),
which prints one JSON object; that probe also reports the numeric keys of an episode's last ``info``
(``EnvSpaces.info_keys``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass, replace
from typing import Any

from core.config.algorithms.contrib import installed_algorithms, is_installed, missing_text
from core.config.algorithms.off_policy import ReplayParams
from core.config.algorithms.registry import algorithms_for
from core.config.algorithms.spec import SPACE_KINDS
from core.config.engines import check_engine
from core.config.errors import ConfigError, FieldIssue
from core.config.schema import EnvSpec, RunConfig, uses_sde
from core.config.trust import require_trusted
from core.util.console import CHILD_TEXT, utf8_env
from core.util.paths import CODE_ROOT

ActionKind = str  # one of SPACE_KINDS
PROBE_TIMEOUT_S = 60.0
PROBE_MODULE = "core.config.space_probe"  # the subprocess that creates user code's envs


@dataclass(frozen=True)
class EnvSpaces:
    """Shapes and dtypes of an env's spaces, as SB3's buffers and MlpPolicy see them.

    ``obs_features`` is the width of the policy's input (FlattenExtractor, with Discrete
    observations one-hot encoded); ``action_dim`` is what the buffers store per step
    (``get_action_dim``); ``action_logits`` is the width of the actor's output layer.
    """

    obs_shape: tuple[int, ...]
    obs_dtype: str
    action_kind: ActionKind
    action_shape: tuple[int, ...]
    action_dtype: str
    n_actions: int | None = None          # Discrete: n
    obs_kind: str = "box"
    obs_n: int | None = None              # Discrete observations: n (one-hot width)
    obs_nvec: tuple[int, ...] = ()        # MultiDiscrete observations
    action_nvec: tuple[int, ...] = ()     # MultiDiscrete actions
    obs_image: bool = False               # SB3's is_image_space: uint8, 3 dims, 0..255 (a CNN's input)
    obs_keys: tuple[str, ...] = ()        # Dict observations: the keys (obs_shape is their flattened sum)
    action_masks: bool = False            # the env has an action_masks() method (MaskablePPO needs one)
    info_keys: tuple[str, ...] = ()       # numeric keys of info at the end of a probe episode (offered for env.info_keys)

    @property
    def image_chw(self) -> tuple[int, int, int]:
        """An image observation as the CNN sees it: channels first (SB3 transposes channels-last images)."""
        a, b, c = self.obs_shape
        return (a, b, c) if a <= min(b, c) else (c, a, b)

    def stacked(self, n: int) -> EnvSpaces:
        """The spaces after ``VecFrameStack(n)``: the channel axis (last, or first for channels-first images) n times."""
        shape = list(self.obs_shape)
        axis = 0 if self.obs_image and shape[0] <= min(shape[1:]) else len(shape) - 1
        shape[axis] *= n
        return replace(self, obs_shape=tuple(shape))

    @property
    def obs_size(self) -> int:
        """Values stored per observation in a buffer (SB3 ``get_obs_shape``)."""
        return _prod(self.obs_shape)

    @property
    def obs_features(self) -> int:
        if self.obs_kind == "discrete":
            return int(self.obs_n or 1)
        if self.obs_kind == "multidiscrete":
            return int(sum(self.obs_nvec))
        return self.obs_size

    @property
    def action_dim(self) -> int:
        if self.action_kind == "discrete":
            return 1
        if self.action_kind == "multidiscrete":
            return len(self.action_nvec)
        return _prod(self.action_shape)

    @property
    def action_logits(self) -> int:
        if self.action_kind == "discrete":
            return int(self.n_actions or 1)
        if self.action_kind == "multidiscrete":
            return int(sum(self.action_nvec))
        return self.action_dim

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EnvSpaces:
        data = dict(data)
        for key in ("obs_shape", "action_shape", "obs_nvec", "action_nvec"):
            data[key] = tuple(int(v) for v in data.get(key) or ())
        for key in ("obs_keys", "info_keys"):
            data[key] = tuple(str(k) for k in data.get(key) or ())
        return cls(**data)


def _prod(shape: tuple[int, ...]) -> int:
    out = 1
    for s in shape:
        out *= int(s)
    return out


# --- describing gymnasium spaces ----------------------------------------------------------

def space_kind(space: Any) -> str:
    """``box``, ``discrete``, ``multidiscrete`` or ``multibinary`` (else the space's class name, lower case)."""
    from gymnasium import spaces

    for kind, cls in (("box", spaces.Box), ("discrete", spaces.Discrete), ("multidiscrete", spaces.MultiDiscrete),
                      ("multibinary", spaces.MultiBinary), ("dict", spaces.Dict)):
        if isinstance(space, cls):
            return kind
    return type(space).__name__.lower()


def describe(observation_space: Any, action_space: Any, label: str = "the env") -> EnvSpaces:
    """``EnvSpaces`` from gymnasium space objects (no torch involved)."""
    obs, act = observation_space, action_space
    obs_kind, act_kind = space_kind(obs), space_kind(act)
    if obs_kind == "dict":
        return _describe_dict(obs, act, label)
    if obs_kind not in SPACE_KINDS:
        raise ConfigError([FieldIssue("env.id", (
            f"{label} has a {type(obs).__name__} observation space, which rlpanel's MLP policies do not take: "
            "wrap the env with gymnasium.wrappers.FlattenObservation (or use a Box/Discrete observation env)"))])
    if act_kind not in SPACE_KINDS:
        raise ConfigError([FieldIssue("env.id", f"{label} has a {type(act).__name__} action space, "
                                                "which stable-baselines3 does not support")])
    obs_kw: dict[str, Any] = {"obs_kind": obs_kind, "obs_shape": tuple(obs.shape), "obs_image": _is_image(obs)}
    if obs_kind == "discrete":
        obs_kw.update(obs_shape=(1,), obs_n=int(obs.n))
    elif obs_kind == "multidiscrete":
        obs_kw.update(obs_shape=(len(obs.nvec),), obs_nvec=tuple(int(n) for n in obs.nvec))
    act_kw: dict[str, Any] = {"action_kind": act_kind, "action_shape": tuple(act.shape)}
    if act_kind == "discrete":
        act_kw.update(action_shape=(), n_actions=int(act.n))
    elif act_kind == "multidiscrete":
        act_kw.update(action_nvec=tuple(int(n) for n in act.nvec))
    return EnvSpaces(obs_dtype=str(obs.dtype), action_dtype=str(act.dtype), **obs_kw, **act_kw)


def _is_image(space: Any) -> bool:
    """SB3's ``is_image_space`` (without torch): a uint8 Box of 3 dims spanning 0..255."""
    import numpy as np

    return (space_kind(space) == "box" and len(space.shape) == 3 and str(space.dtype) == "uint8"
            and bool(np.all(space.low == 0)) and bool(np.all(space.high == 255)))


def _describe_dict(obs: Any, act: Any, label: str) -> EnvSpaces:
    """A Dict observation (MultiInputPolicy, HER): its parts flattened side by side, as SB3's
    CombinedExtractor and DictReplayBuffer hold them (image parts are not counted as CNNs)."""
    parts = {key: describe(space, act, f"{label} ({key})") for key, space in obs.spaces.items()}
    if not parts:
        raise ConfigError([FieldIssue("env.id", f"{label} has an empty Dict observation space: nothing to learn from")])
    widest = max(parts.values(), key=lambda p: p.obs_size)
    return replace(widest, obs_kind="dict", obs_shape=(sum(p.obs_size for p in parts.values()),), obs_image=False,
                   obs_n=None, obs_nvec=(), obs_keys=tuple(parts))


def trainers(action_kind: str) -> list[str]:
    """The installed algorithms that take actions of this kind, in table order."""
    here = installed_algorithms()
    return [algo for algo in algorithms_for(action_kind) if algo in here]


def either(names: list[str]) -> str:
    """``PPO, A2C or DQN``."""
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


def check_spaces(cfg: RunConfig, action_kind: str, spaces: EnvSpaces | None = None) -> list[FieldIssue]:
    """Rules that need the env's action space (``box``, ``discrete``, ...) and, given them, its observations.

    Every launch passes here first, so an sb3-contrib algorithm or an engine that is not installed is refused here too
    (SBX's TQC and CrossQ need no sb3-contrib).
    """
    spec = cfg.spec
    label = cfg.env.label
    engine = check_engine(cfg, obs_image=spaces is not None and spaces.obs_image,
                          obs_dict=spaces is not None and spaces.obs_kind == "dict")
    if engine:
        return engine
    if spec is not None and cfg.runtime.engine == "sb3" and not is_installed(spec):
        return [FieldIssue("algo", missing_text(spec.name))]
    if spec is not None and not spec.takes(action_kind):
        use = either([a for a in trainers(action_kind) if a != spec.name])
        return [FieldIssue("algo", f"{spec.name} needs {spec.action_need}; {label} has a {action_kind} one: use {use}")]
    if cfg.algo == "constant" and action_kind != "box":
        return [FieldIssue("algo", f"the constant baseline plays the zero action of a Box action space; {label} has a "
                                   f"{action_kind} one: use the random baseline")]
    issues: list[FieldIssue] = []
    if spec is not None and uses_sde(cfg) and action_kind != "box":
        issues.append(FieldIssue(f"{spec.section}.use_sde", f"gSDE needs continuous (Box) actions; {label} has {action_kind} "
                                                            "ones: turn use_sde off"))
    if spaces is not None and spec is not None:
        issues += _observation_rules(cfg, spaces)
    return issues


def has_action_masks(env: Any) -> bool:
    """Whether ``env`` (or an env inside its wrappers) has an ``action_masks()`` method, as sb3-contrib looks for it."""
    getter = getattr(env, "get_wrapper_attr", None)
    try:
        method = getter("action_masks") if callable(getter) else env.action_masks
    except AttributeError:
        return False
    return callable(method)


def _algorithm_rules(cfg: RunConfig, spaces: EnvSpaces) -> list[FieldIssue]:
    """What the algorithm's SB3 class needs of the env beyond its action space: action masks, a policy kind it has."""
    assert cfg.spec is not None
    spec, label, issues = cfg.spec, cfg.env.label, []
    if spec.needs_action_masks and not spaces.action_masks:
        issues.append(FieldIssue("algo", f"{spec.name} needs an env with an action_masks() method (a bool array: which "
                                         f"actions are valid now); {label} has none: add one to the env (or a wrapper), "
                                         "or use PPO"))
    kind = _resolved_kind(cfg, spaces)
    if kind not in spec.policy_kinds:
        has = ", ".join(spec.policy_kinds)
        issues.append(FieldIssue("policy.kind", f"{spec.name} has no {kind} (it has {has}); {label} needs "
                                                f"{kind}: use another algorithm or env"))
    return issues


def _resolved_kind(cfg: RunConfig, spaces: EnvSpaces) -> str:
    if cfg.policy.kind != "auto":
        return str(cfg.policy.kind)
    return "MultiInputPolicy" if spaces.obs_kind == "dict" else "CnnPolicy" if spaces.obs_image else "MlpPolicy"


def _observation_rules(cfg: RunConfig, spaces: EnvSpaces) -> list[FieldIssue]:
    """The policy kind, HER and frame stacking against the observations."""
    assert cfg.spec is not None
    label, kind, issues = cfg.env.label, cfg.policy.kind, _algorithm_rules(cfg, spaces)
    if kind == "CnnPolicy" and not spaces.obs_image:
        issues.append(FieldIssue("policy.kind", f"CnnPolicy needs image observations (uint8, 3 dims, 0..255); {label} has "
                                                f"{spaces.obs_kind} {list(spaces.obs_shape)}: use auto or MlpPolicy"))
    if kind in ("MlpPolicy", "CnnPolicy") and spaces.obs_kind == "dict":
        issues.append(FieldIssue("policy.kind", f"{label} has dict observations: use MultiInputPolicy (or auto)"))
    if kind == "MultiInputPolicy" and spaces.obs_kind != "dict":
        issues.append(FieldIssue("policy.kind", f"MultiInputPolicy needs dict observations; {label} has {spaces.obs_kind} "
                                                "ones: use auto or MlpPolicy"))
    goal_keys = {"observation", "achieved_goal", "desired_goal"}
    if cfg.env.frame_stack and spaces.obs_kind not in ("box", "dict"):
        issues.append(FieldIssue("env.frame_stack", f"frame stacking needs Box observations; {label} has {spaces.obs_kind} "
                                                    "ones: leave frame_stack empty"))
    her = cfg.spec is not None and isinstance(cfg.params, ReplayParams) and cfg.params.replay_buffer == "her"
    if her and not goal_keys <= set(spaces.obs_keys):
        issues.append(FieldIssue(f"{cfg.spec.section}.replay_buffer", f"HER needs a goal env (dict observations with "
                                                                      f"{', '.join(sorted(goal_keys))}); {label} has none: "
                                                                      "use the default replay buffer"))
    return issues


# --- probing ---------------------------------------------------------------------------------

_cache: dict[tuple[str, str, str], EnvSpaces] = {}
_lock = threading.Lock()
_make_lock = threading.Lock()


def _key(env: EnvSpec) -> tuple[str, str, str]:
    made = json.dumps({"kwargs": env.kwargs, "wrappers": env.model_dump(mode="json")["wrappers"]}, sort_keys=True, default=repr)
    return ("entry_point", env.entry_point, made) if env.entry_point else ("id", env.id or "", made)


def probe_spaces(env: EnvSpec, use_cache: bool = True) -> EnvSpaces:
    """The spaces of ``env`` as the agent sees them (wrappers and frame stack applied); raise
    ``ConfigError`` on ``env.id`` when it cannot be created.

    Wrappers are code the user names, so an env with wrappers is probed in a subprocess like an
    entry point; the frame stack is arithmetic (``EnvSpaces.stacked``).
    """
    require_trusted(env)  # an entry point is user code: its spaces are read only once the user trusts it
    key = _key(env)
    found: EnvSpaces | None = None
    if use_cache:
        with _lock:
            found = _cache.get(key)
    if found is None:
        found = _probe_subprocess(env) if env.entry_point or env.wrappers else _probe_gym_id(env)
        with _lock:
            _cache[key] = found
    if env.frame_stack and found.obs_kind == "box":
        return found.stacked(env.frame_stack)
    return found


def _probe_gym_id(env: EnvSpec) -> EnvSpaces:
    import gymnasium

    try:
        with _make_lock:  # two threads creating envs at once race gymnasium's lazy module imports
            made = gymnasium.make(env.id or "", **env.kwargs)
    except Exception as exc:  # gymnasium raises many kinds: NameNotFound, DependencyNotInstalled, TypeError...
        raise ConfigError([FieldIssue("env.id", _gym_error_text(env, exc))]) from None
    try:
        found = describe(made.observation_space, made.action_space, env.id or "the env")
        return replace(found, action_masks=has_action_masks(made))
    finally:
        try:
            made.close()
        except Exception:  # a broken close must not hide the spaces we already have
            pass


def _gym_error_text(env: EnvSpec, exc: BaseException) -> str:
    name = type(exc).__name__
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else name
    if name == "DependencyNotInstalled":
        fix = "install the extra it names"
    elif name in ("NameNotFound", "NamespaceNotFound", "VersionNotFound", "DeprecatedEnv", "Error"):
        fix = "check the spelling and version (e.g. CartPole-v1), or use env.entry_point for a custom env"
    elif isinstance(exc, TypeError):
        fix = "check env.kwargs against the env's constructor"
    else:
        fix = "check env.id and env.kwargs"
    return f"cannot create environment {env.id!r}: {name}: {detail}; {fix}"


def child_json(cmd: list[str], folder: str | None, timeout_s: float) -> tuple[dict[str, Any] | None, str]:
    """Run ``cmd`` (a probe of the user's code) with ``folder`` (else the working folder) first on its import path
    and as its working folder; (its last JSON line, "") or (None, why it gave none: its exit and last error line).
    Raises ``subprocess.TimeoutExpired`` past ``timeout_s``. The env probe and the network measurement
    (``core.estimate.measured``) both run this way."""
    where = folder or os.getcwd()
    pythonpath = os.pathsep.join(filter(None, [str(CODE_ROOT), where, os.environ.get("PYTHONPATH")]))
    done = subprocess.run(cmd, capture_output=True, **CHILD_TEXT, timeout=timeout_s,
                          env=utf8_env({**os.environ, "PYTHONPATH": pythonpath}), cwd=where if os.path.isdir(where) else None)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    try:
        return json.loads(lines[-1]), ""
    except (IndexError, ValueError):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"exit {done.returncode}: {tail}"


def _probe_subprocess(env: EnvSpec) -> EnvSpaces:
    where = "env.entry_point" if env.entry_point else "env.wrappers"
    cmd = [sys.executable, "-m", PROBE_MODULE, "--env",
           json.dumps(env.model_dump(mode="json", exclude={"frame_stack"}), default=repr)]
    try:  # imported from where the worker will import it (EnvSpec.path)
        data, failed = child_json(cmd, env.path, PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ConfigError([FieldIssue(where, (
            f"creating {env.label} took longer than {PROBE_TIMEOUT_S:.0f} s: make its constructor fast "
            "(no network calls in __init__) so its spaces can be read"))]) from None
    if data is None:
        data = {"error": f"the probe process failed ({failed})"}
    if "error" in data:
        what = "the module is importable" if env.entry_point else "each wrapper's module is installed"
        raise ConfigError([FieldIssue(where, (
            f"cannot create environment {env.entry_point or env.id!r}: {data['error']}; check that {what} from the folder "
            "you start rlpanel in and that the kwargs match the constructors"))])
    return EnvSpaces.from_json(data)
