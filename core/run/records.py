"""The lines of ``metrics.jsonl``, built in one place: one function per record kind.

Every record has ``kind`` and ``t`` (unix time); readers tolerate unknown keys and kinds.

- episode  {step, t, reward, length[, m: {<env.info_keys>: number}][, truncated: reason]} (m: the env's own
  measures; truncated: the episode was cut short because its env process was replaced, and why)
- episodes {step, t, n, step_first, reward, reward_std, reward_min, reward_max, length, length_min,
  length_max[, m]}: ``n`` episodes of one flush in one record (means, population std, extremes; m:
  the measures' means), written instead of episode records past ``core.run.episodes.EPISODES_PER_S``.
  Read both through ``core.run.episodes.episode_groups``
- progress {step, t, fps, total} (at most once a second, and the last; a baseline adds episodes, episodes_total)
- train    {step, t, <SB3 logger keys: losses, entropy, lr, ...>} (at most once a second: faster dumps merged)
- eval     {step, t, mean_reward, std_reward, episodes}
- event    {t, level, message} (+ step when it belongs to one: checkpoint saved, warning, ...; + code
  for what a program may act on: thermal_pause, thermal_resume, gpu_memory, gpu_sysmem_fallback); the worker also prints
  most to worker.log (``event_echo``), which the Log tab, showing both, drops (``is_event_echo``)
- cycle    {step, t, n, collect_s, train_s, other_s[, gpu_collect_pct, gpu_train_pct]}: where the time of ``n``
  update cycles went (collecting, training, the rest; ``core.worker.cycle_clock``), at most one a second
  (faster cycles merged, their seconds summed); the GPU's mean utilisation in each phase on a CUDA run.
  Read through ``core.run.time_split``
- attempt  {t, step, attempt} written first by every attempt of the worker (the first, a resume, a
  restart): the run did not run between the records before it and those after it, so plots break
  their lines there
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterable
from typing import Any

EPISODE, PROGRESS, TRAIN, EVAL, EVENT, ATTEMPT = "episode", "progress", "train", "eval", "event", "attempt"
EPISODES = "episodes"  # an aggregate of many episode records
CYCLE = "cycle"  # where the time of the update cycles went (core.run.time_split)
STEP_KINDS = (EPISODE, EPISODES, PROGRESS, TRAIN)  # the kinds whose step tells how far a run got


def episode(step: int, reward: float, length: int, t: float | None = None,
            measures: dict[str, float] | None = None, truncated: str | None = None) -> dict[str, Any]:
    """``measures``: the env's own numbers at the episode's end (``env.info_keys``), kept under ``m``;
    ``truncated``: why the episode was cut short (its env process was replaced: a step past ``env.step_timeout_s``)."""
    rec = {"kind": EPISODE, "step": int(step), "t": time.time() if t is None else t,
           "reward": float(reward), "length": int(length)}
    if measures:
        rec["m"] = measures
    if truncated:
        rec["truncated"] = truncated
    return rec


def measures_of(ep: dict[str, Any], keys: tuple[str, ...] | list[str]) -> dict[str, float] | None:
    """The finite numbers among ``keys`` of a Monitor episode dict (a key the env did not report is left out)."""
    out = {}
    for key in keys:
        value = ep.get(key)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):  # numpy's scalars are Real too
            continue
        if math.isfinite(float(value)):
            out[key] = float(value)
    return out or None


def episodes(eps: list[dict[str, Any]]) -> dict[str, Any]:
    """One record for the episode records ``eps`` (oldest first, at least one): how many, their step
    range, the mean, population std and extremes of reward and length, and each measure's mean over
    the episodes that reported it."""
    rewards = [float(e["reward"]) for e in eps]
    lengths = [int(e["length"]) for e in eps]
    n = len(eps)
    mean = sum(rewards) / n
    rec: dict[str, Any] = {
        "kind": EPISODES, "step": int(eps[-1]["step"]), "t": eps[-1]["t"], "n": n, "step_first": int(eps[0]["step"]),
        "reward": mean, "reward_std": math.sqrt(sum((r - mean) ** 2 for r in rewards) / n),
        "reward_min": min(rewards), "reward_max": max(rewards),
        "length": sum(lengths) / n, "length_min": min(lengths), "length_max": max(lengths)}
    sums: dict[str, list[float]] = {}
    for e in eps:
        for key, value in (e.get("m") or {}).items():
            acc = sums.setdefault(key, [0.0, 0])
            acc[0] += value
            acc[1] += 1
    if sums:
        rec["m"] = {key: total / count for key, (total, count) in sums.items()}
    return rec


def progress(step: int, fps: float, total: int | None, **extra: Any) -> dict[str, Any]:
    return {"kind": PROGRESS, "step": int(step), "t": time.time(), "fps": round(fps, 2), "total": total, **extra}


def train(step: int, values: dict[str, float | None]) -> dict[str, Any]:
    return {"kind": TRAIN, "step": int(step), "t": time.time(), **values}


def cycle(step: int, n: int, collect_s: float, train_s: float, other_s: float,
          gpu_collect_pct: float | None = None, gpu_train_pct: float | None = None) -> dict[str, Any]:
    """``n`` update cycles ending at ``step``: seconds collecting, training and the rest, and the GPU's mean
    utilisation while collecting and while training (a CUDA run with telemetry)."""
    rec: dict[str, Any] = {"kind": CYCLE, "step": int(step), "t": time.time(), "n": int(n),
                           "collect_s": round(collect_s, 6), "train_s": round(train_s, 6), "other_s": round(other_s, 6)}
    if gpu_collect_pct is not None:
        rec["gpu_collect_pct"] = round(gpu_collect_pct, 1)
    if gpu_train_pct is not None:
        rec["gpu_train_pct"] = round(gpu_train_pct, 1)
    return rec


def evaluation(step: int, mean_reward: float, std_reward: float, episodes: int) -> dict[str, Any]:
    return {"kind": EVAL, "step": int(step), "t": time.time(), "mean_reward": float(mean_reward),
            "std_reward": float(std_reward), "episodes": int(episodes)}


EVENT_LEVELS = ("info", "warning", "error")
ECHO_PREFIXES = tuple(f"worker: {level}: " for level in EVENT_LEVELS)


def event_echo(level: str, message: str) -> str:
    """The worker.log line the worker prints beside an event record (a reader of the log alone sees it)."""
    return f"worker: {level}: {message}"


def is_event_echo(line: str) -> bool:
    """Whether a worker.log line is an event record's echo: a view showing both the log and the events drops it."""
    return line.startswith(ECHO_PREFIXES)


def event(message: str, level: str = "info", step: int | None = None, code: str | None = None) -> dict[str, Any]:
    rec: dict[str, Any] = {"kind": EVENT, "t": time.time(), "level": level}
    if step is not None:
        rec["step"] = int(step)
    if code is not None:
        rec["code"] = code
    rec["message"] = message
    return rec


def attempt(number: int, step: int) -> dict[str, Any]:
    """Attempt ``number`` of the worker starts, from ``step`` (a resume: the checkpoint's)."""
    return {"kind": ATTEMPT, "t": time.time(), "step": int(step), "attempt": int(number)}


# --- reading them back: a record of the wrong shape is skipped, never a crash ---------------------

def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _num_or_none(v: Any) -> bool:
    return v is None or _num(v)


_REQUIRED: dict[str, dict[str, Any]] = {
    EPISODE: {"step": _int, "t": _num, "reward": _num, "length": _int},
    EPISODES: {"step": _int, "t": _num, "n": lambda v: _int(v) and v > 0, "reward": _num, "reward_min": _num,
               "reward_max": _num, "length": _num},
    PROGRESS: {"step": _int, "t": _num, "fps": _num_or_none, "total": lambda v: v is None or _int(v)},
    TRAIN: {"step": _int, "t": _num},
    EVAL: {"step": _int, "t": _num, "mean_reward": _num, "std_reward": _num},
    CYCLE: {"step": _int, "t": _num, "n": lambda v: _int(v) and v > 0, "collect_s": _num, "train_s": _num,
            "other_s": _num},
    EVENT: {"t": _num, "message": lambda v: isinstance(v, str), "level": lambda v: isinstance(v, str)},
}


def well_formed(rec: dict[str, Any]) -> bool:
    """Whether ``rec`` has the fields its kind promises, of the right types (a hand-edited or
    damaged ``metrics.jsonl`` may hold anything). Unknown kinds pass if their ``step`` is a whole
    number; a train record's values must be numbers or null."""
    kind = rec.get("kind")
    if not isinstance(kind, str) or ("step" in rec and not _int(rec["step"])):
        return False
    checks = _REQUIRED.get(kind)
    if checks is None:
        return True
    if any(key not in rec or not check(rec[key]) for key, check in checks.items()):
        return False
    return kind != TRAIN or all(_num_or_none(v) for k, v in rec.items() if k not in ("kind", "step", "t"))


def well_formed_only(recs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of ``recs`` that are ``well_formed``."""
    return [r for r in recs if well_formed(r)]
