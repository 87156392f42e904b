"""The settings ``rlpanel tune`` varies, what each one changes in learning, and the moves of the search.

A candidate is a dict of dotted paths (``runtime.n_envs``, ``ppo.batch_size``) to values. Moving
``n_envs`` keeps what is learned where it can: PPO/A2C keep the rollout (``n_envs x n_steps``),
off-policy algorithms keep gradient steps per env step (``gradient_steps / (train_freq x n_envs)``).
A move that cannot keep them, or a knob that is learning itself (PPO's batch size, the
rollout), changes learning: ``learning_changes`` names it against the user's config.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from core.config.algorithms.off_policy import OffPolicyParams
from core.config.algorithms.ppo import largest_divisor
from core.config.fields import fields_where
from core.config.schema import RunConfig

Settings = dict[str, Any]
FACTORS = (2, 0.5)


def knob_paths(cfg: RunConfig) -> list[str]:
    """The dotted paths a tune may set for this algorithm: runtime first, then the algorithm's."""
    spec = cfg.spec
    paths = ["runtime.n_envs", "runtime.vec_env", "runtime.device", "runtime.torch_threads", "runtime.engine"]
    if spec is None:
        return paths
    names = fields_where(spec.params, knob=True)  # hp(..., knob=True): the rollout, the batch, train_freq and gradient_steps
    params = cfg.params
    if isinstance(params, OffPolicyParams) and params.train_freq_unit == "episode":
        names = tuple(n for n in names if n not in ("train_freq", "gradient_steps"))  # episodes: no step ratio to keep
    return paths + [f"{spec.section}.{n}" for n in names]


def settings_of(cfg: RunConfig, device: str) -> Settings:
    """The tuned settings of ``cfg`` (``device`` resolved: ``auto`` is where it really trains)."""
    out: Settings = {}
    for path in knob_paths(cfg):
        head, _, name = path.partition(".")
        out[path] = device if path == "runtime.device" else getattr(cfg.runtime if head == "runtime" else cfg.params, name)
    return out


def _param(settings: Settings, name: str) -> Any:
    return next((v for k, v in settings.items() if k.endswith("." + name) and not k.startswith("runtime.")), None)


def _path(settings: Settings, name: str) -> str | None:
    return next((k for k in settings if k.endswith("." + name) and not k.startswith("runtime.")), None)


def learning(settings: Settings) -> dict[str, Any]:
    """What these settings make the algorithm learn from: the quantities a tune keeps unless allowed."""
    n = int(settings["runtime.n_envs"])
    n_steps, batch = _param(settings, "n_steps"), _param(settings, "batch_size")
    out: dict[str, Any] = {}
    if n_steps is not None:
        out["rollout"] = int(n_steps) * n
    else:
        tf, gs = _param(settings, "train_freq"), _param(settings, "gradient_steps")
        if gs is not None:
            out["gradient steps per env step"] = Fraction(1) if int(gs) == -1 else Fraction(int(gs), int(tf or 1) * n)
    if batch is not None:
        out["batch_size"] = batch
    return out


def learning_changes(settings: Settings, user: Settings) -> list[str]:
    """``rollout 2048 -> 4096``: each learning quantity these settings change against the user's."""
    mine, theirs = learning(settings), learning(user)
    return [f"{k} {_show(theirs.get(k))} -> {_show(v)}" for k, v in mine.items() if theirs.get(k) != v]


def _show(value: Any) -> str:
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"{float(value):.3g}"
    return str(value)


def with_n_envs(settings: Settings, n: int) -> Settings:
    """``settings`` with ``n`` envs, keeping what is learned where whole numbers allow it."""
    out = {**settings, "runtime.n_envs": n}
    old = int(settings["runtime.n_envs"])
    steps_path = _path(settings, "n_steps")
    if steps_path:
        rollout = int(settings[steps_path]) * old
        if rollout % n == 0 and rollout // n >= 2:
            out[steps_path] = rollout // n
        else:  # the rollout changes: keep the batch a divisor of it
            batch_path = _path(settings, "batch_size")
            if batch_path and isinstance(out[batch_path], int):
                out[batch_path] = largest_divisor(int(out[steps_path]) * n, int(out[batch_path]))
        return out
    tf_path, gs_path = _path(settings, "train_freq"), _path(settings, "gradient_steps")
    if tf_path and gs_path and int(settings[gs_path]) != -1:
        ratio = Fraction(int(settings[gs_path]), int(settings[tf_path]) * old)
        for tf in range(1, 257):
            gs = ratio * tf * n
            if gs.denominator == 1 and gs >= 1:
                out[tf_path], out[gs_path] = tf, int(gs)
                break
    return out


def algo_moves(settings: Settings) -> list[tuple[str, Settings]]:
    """The algorithm's knobs one step each way from ``settings``: ``(direction name, candidate)``."""
    moves: list[tuple[str, Settings]] = []
    n = int(settings["runtime.n_envs"])
    steps_path, batch_path = _path(settings, "n_steps"), _path(settings, "batch_size")
    tf_path, gs_path = _path(settings, "train_freq"), _path(settings, "gradient_steps")
    for factor in FACTORS:
        arrow = "up" if factor > 1 else "down"
        if batch_path and isinstance(settings[batch_path], int):
            batch = int(settings[batch_path] * factor)
            rollout = int(settings[steps_path]) * n if steps_path else None
            if batch >= 2 and (rollout is None or (batch <= rollout and rollout % batch == 0)):
                moves.append((f"batch_size {arrow}", {**settings, batch_path: batch}))
        if steps_path:
            steps = int(settings[steps_path] * factor)
            if steps * n >= 2 and steps >= 1:
                cand = {**settings, steps_path: steps}
                if batch_path and isinstance(cand[batch_path], int):
                    cand[batch_path] = largest_divisor(steps * n, int(cand[batch_path]))
                moves.append((f"n_steps {arrow}", cand))
        if tf_path and gs_path:  # train less often, more steps each time: the same gradient steps per env step
            tf = settings[tf_path] * factor
            gs = settings[gs_path] if int(settings[gs_path]) == -1 else settings[gs_path] * factor
            if tf >= 1 and (gs == -1 or gs >= 1) and float(tf).is_integer() and float(gs).is_integer():
                moves.append((f"train_freq {arrow}", {**settings, tf_path: int(tf), gs_path: int(gs)}))
    return moves


def short(settings: Settings) -> str:
    """``n_envs=8 subproc cpu n_steps=256 batch_size=64``: a candidate in one line (the engine has its own column)."""
    parts = []
    for path, value in settings.items():
        if path == "runtime.engine":
            continue
        name = path.rpartition(".")[2].replace("torch_threads", "threads")
        parts.append(str(value) if name in ("vec_env", "device") else f"{name}={'auto' if value is None else value}")
    return " ".join(parts)
