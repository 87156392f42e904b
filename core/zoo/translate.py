"""One rl_zoo3 entry -> a partial rlpanel config, with every field it could not express named.

rl_zoo3 passes an entry to the algorithm's constructor after taking out its own keys
(``n_timesteps``, ``n_envs``, ``normalize``, ``env_wrapper``, ``frame_stack``, ``policy``,
``noise_type``, ...; see ``ExperimentManager._preprocess_hyperparams``). Each is mapped to its
schema field here; what has no counterpart becomes a ``Drop`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.config.algorithms.registry import ALGORITHMS
from core.config.dotted import del_path, get_path, set_path
from core.config.errors import ConfigError
from core.config.validate import validate_config
from core.zoo.pyexpr import Name, parse_python_value

# rl_zoo3's file (and --algo) names -> rlpanel's algorithm names (each algorithm's table says its zoo name)
ZOO_ALGOS = {spec.zoo_name: name for name, spec in ALGORITHMS.items()}
ACTIVATIONS = {"nn.ReLU": "relu", "nn.Tanh": "tanh", "nn.ELU": "elu", "nn.LeakyReLU": "leaky_relu", "nn.GELU": "gelu",
               "nn.SiLU": "silu"}
OPTIMIZERS = {"th.optim.Adam": "adam", "th.optim.AdamW": "adamw", "th.optim.RMSprop": "rmsprop", "th.optim.SGD": "sgd",
              "RMSpropTFLike": "rmsprop_tf_like"}
POLICY_KINDS = ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")
POLICY_FIELDS = ("log_std_init", "ortho_init", "use_expln", "full_std", "squash_output", "share_features_extractor",
                 "n_critics")
NORMALIZE_FIELDS = {"norm_obs": "obs", "norm_reward": "reward", "gamma": "gamma", "clip_obs": "clip_obs",
                    "clip_reward": "clip_reward", "norm_obs_keys": "norm_obs_keys"}
ZOO_ONLY = {"callback": "rlpanel's worker records, checkpoints and evaluates with its own callbacks",
            "monitor_kwargs": "rlpanel's worker sets up the Monitor itself",
            "vec_env_wrapper": "rlpanel applies VecNormalize and VecFrameStack itself; other VecEnv wrappers are not supported",
            "n_steps_lookahead": "not an SB3 setting"}


@dataclass(frozen=True)
class Drop:
    """A zoo field rlpanel cannot express, and why."""

    key: str
    reason: str

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"


@dataclass
class Translated:
    """An entry as a partial config: ``raw`` (with ``algo`` and ``env``), what was dropped, warnings."""

    algo: str
    env: str
    raw: dict[str, Any]
    dropped: list[Drop] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # where each config path came from in the entry, so a value refused by validation drops its zoo key
    origin: dict[str, str] = field(default_factory=dict)


class _Builder:
    def __init__(self, algo: str, env: str):
        self.out = Translated(algo, env, {"algo": algo})
        self.section = ALGORITHMS[algo].section if algo in ALGORITHMS else algo.lower()

    def put(self, path: str, value: Any, key: str) -> None:
        self.out.raw = set_path(self.out.raw, path, value)
        self.out.origin[path] = key

    def drop(self, key: str, reason: str) -> None:
        self.out.dropped.append(Drop(key, reason))


def translate_entry(zoo_algo: str, env: str, entry: dict[str, Any]) -> Translated:
    """The partial config for one entry of ``hyperparams/<zoo_algo>.yml``; raises ``KeyError`` for an algorithm rlpanel lacks."""
    algo = ZOO_ALGOS[zoo_algo]
    b = _Builder(algo, env)
    if env not in ("atari", "default"):
        b.put("env.id", env, "env")
    for key, value in entry.items():
        try:
            _one(b, key, value)
        except ValueError as exc:
            b.drop(key, f"{value!r} cannot be read: {exc}")
    return b.out


def _one(b: _Builder, key: str, value: Any) -> None:  # noqa: C901 - one branch per zoo key, as the zoo reads them
    spec = ALGORITHMS.get(b.out.algo)
    if key == "n_timesteps":
        b.put("budget.total_timesteps", value, key)
    elif key == "n_envs":
        b.put("runtime.n_envs", value, key)
    elif key == "policy":
        _policy(b, value)
    elif key == "policy_kwargs":
        _policy_kwargs(b, parse_python_value(value) if isinstance(value, str) else value)
    elif key == "normalize":
        _normalize(b, parse_python_value(value) if isinstance(value, str) else value)
    elif key == "env_wrapper":
        b.put("env.wrappers", value, key)
    elif key == "frame_stack":
        b.put("env.frame_stack", value, key)
    elif key == "env_kwargs":
        b.put("env.kwargs", value, key)
    elif key == "train_freq":
        if isinstance(value, (list, tuple)):
            b.put(f"{b.section}.train_freq", value[0], key)
            b.put(f"{b.section}.train_freq_unit", str(value[1]), key)
        else:
            b.put(f"{b.section}.train_freq", value, key)
    elif key == "noise_type":
        b.put(f"{b.section}.action_noise", str(value).strip(), key)
    elif key == "noise_std":
        b.put(f"{b.section}.action_noise_std", value, key)
    elif key == "replay_buffer_class":
        if str(value).rsplit(".", 1)[-1] != "HerReplayBuffer":
            b.drop(key, f"{value} is not a replay buffer rlpanel builds (it builds SB3's default and HerReplayBuffer)")
        else:
            b.put(f"{b.section}.replay_buffer", "her", key)
    elif key == "replay_buffer_kwargs":
        _her_kwargs(b, parse_python_value(value) if isinstance(value, str) else value)
    elif key in ZOO_ONLY:
        b.drop(key, ZOO_ONLY[key])
    elif spec is not None and key in spec.params.model_fields:
        b.put(f"{b.section}.{key}", value, key)
    else:
        b.drop(key, f"rlpanel's {b.out.algo} has no {key} setting")


def _policy(b: _Builder, value: Any) -> None:
    name = str(value)
    spec = ALGORITHMS.get(b.out.algo)
    kinds = dict(spec.policy_names) if spec is not None and spec.policy_names else {
        k: k for k in (spec.policy_kinds if spec is not None else POLICY_KINDS)}
    if spec is not None and spec.policy_switch is not None and name == spec.policy_switch[0]:
        b.put(f"{b.section}.{spec.policy_switch[1]}", True, "policy")  # ARS: LinearPolicy
    elif name in kinds:
        b.put("policy.kind", kinds[name], "policy")
    else:
        b.drop("policy", f"{name} is not a policy rlpanel builds for {b.out.algo} (it builds {', '.join(kinds)})")


def _policy_kwargs(b: _Builder, kwargs: Any) -> None:
    if not isinstance(kwargs, dict):
        b.drop("policy_kwargs", f"{kwargs!r} is not a dict")
        return
    spec = ALGORITHMS.get(b.out.algo)
    in_policy = spec.policy_params if spec is not None else ()  # its fields marked hp(..., sb3="policy")
    for name, value in kwargs.items():
        key = f"policy_kwargs.{name}"
        if name == "net_arch":
            b.put("policy.net_arch", value, key)
        elif name == "activation_fn":
            _named(b, "policy.activation", value, ACTIVATIONS, key, "activation")
        elif name == "optimizer_class":
            _named(b, "policy.optimizer", value, OPTIMIZERS, key, "optimizer")
        elif name == "optimizer_kwargs" and isinstance(value, dict):
            for opt_key, opt_value in value.items():
                if opt_key in ("eps", "weight_decay"):
                    b.put("policy.optimizer_eps" if opt_key == "eps" else "policy.weight_decay", opt_value, f"{key}.{opt_key}")
                else:
                    b.drop(f"{key}.{opt_key}", f"rlpanel sets only the optimizer's eps and weight_decay, not {opt_key}")
        elif name == "features_extractor_class":  # the user's own network: module.Class -> module:Class
            text = value.dotted if isinstance(value, Name) else str(value)
            module, _, cls = text.replace(":", ".").rpartition(".")
            b.put("policy.features_extractor", f"{module}:{cls}" if module else text, key)
        elif name == "features_extractor_kwargs":
            if isinstance(value, dict) and not any(isinstance(v, Name) for v in value.values()):
                b.put("policy.features_extractor_kwargs", value, key)
            else:
                b.drop(key, f"{value!r} is not a mapping of plain values (a name such as nn.ReLU cannot be stored)")
        elif name in POLICY_FIELDS:
            b.put(f"policy.{name}", value, key)
        elif name in in_policy:  # a policy setting the algorithm's table holds (RecurrentPPO's LSTM sizes, quantiles)
            b.put(f"{b.section}.{name}", value, key)
        else:
            b.drop(key, f"rlpanel's policy settings have no {name}")


def _named(b: _Builder, path: str, value: Any, table: dict[str, str], key: str, what: str) -> None:
    text = value.dotted if isinstance(value, Name) else str(value)
    text = text.replace("torch.", "th.").replace("th.nn.", "nn.")
    if text in table:
        b.put(path, table[text], key)
    else:
        b.drop(key, f"{text} is not an {what} rlpanel offers ({', '.join(table)})")


def _normalize(b: _Builder, value: Any) -> None:
    if isinstance(value, bool):
        b.put("runtime.normalize.obs", value, "normalize")
        b.put("runtime.normalize.reward", value, "normalize")
        return
    if not isinstance(value, dict):
        b.drop("normalize", f"{value!r} is neither true/false nor a dict of VecNormalize settings")
        return
    b.put("runtime.normalize.obs", bool(value.get("norm_obs", True)), "normalize.norm_obs")
    b.put("runtime.normalize.reward", bool(value.get("norm_reward", True)), "normalize.norm_reward")
    for name, setting in value.items():
        if name in ("norm_obs", "norm_reward"):
            continue
        if name in NORMALIZE_FIELDS:
            b.put(f"runtime.normalize.{NORMALIZE_FIELDS[name]}", setting, f"normalize.{name}")
        else:
            b.drop(f"normalize.{name}", f"rlpanel's VecNormalize settings have no {name}")


def _her_kwargs(b: _Builder, value: Any) -> None:
    if not isinstance(value, dict):
        b.drop("replay_buffer_kwargs", f"{value!r} is not a dict")
        return
    for name, setting in value.items():
        if name in ("n_sampled_goal", "goal_selection_strategy"):
            b.put(f"{b.section}.her_{name}", setting, f"replay_buffer_kwargs.{name}")
        else:
            b.drop(f"replay_buffer_kwargs.{name}", f"rlpanel's HER settings have no {name}")


def validated_translation(t: Translated) -> tuple[Translated, str | None]:
    """Validate the partial config; a field the schema refuses is dropped with the schema's message
    and the rest tried again. Returns the translation and, if it still cannot be used, why."""
    for _ in range(len(t.origin) + 1):
        try:
            validated = validate_config(t.raw)
        except ConfigError as exc:
            blamed = [i for i in exc.issues if _origin(t, i.path)]
            if not blamed:
                return t, "; ".join(str(i) for i in exc.issues)
            for issue in blamed:
                path = _origin(t, issue.path)
                assert path is not None
                t.dropped.append(Drop(t.origin.pop(path), f"refused by rlpanel: {issue.message}"))
                t.raw = del_path(t.raw, path)
            continue
        t.warnings += [w for w in validated.warnings if w not in t.warnings]
        resolved = validated.config.model_dump(mode="json")
        for path in t.origin:  # the zoo's !!float 1e6 for an integer setting is stored as 1000000
            value, clean = get_path(t.raw, path), get_path(resolved, path)
            if isinstance(value, float) and isinstance(clean, int) and not isinstance(clean, bool):
                t.raw = set_path(t.raw, path, clean)
        return t, None
    return t, "validation did not settle"


def _origin(t: Translated, path: str) -> str | None:
    """The config path (from the entry) an issue at ``path`` is about: the path itself or its section."""
    for candidate in (path, path.rsplit(".", 1)[0]):
        if candidate in t.origin and get_path(t.raw, candidate) is not None:
            return candidate
    return None
