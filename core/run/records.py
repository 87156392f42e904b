"""The lines of ``metrics.jsonl``, built in one place: one function per record kind.

Every record has ``kind`` and ``t`` (unix time); readers tolerate unknown keys and kinds.

- episode  {step, t, reward, length}
- progress {step, t, fps, total} (about once a second; a baseline adds episodes, episodes_total)
- train    {step, t, <SB3 logger keys: losses, entropy, lr, ...>}
- eval     {step, t, mean_reward, std_reward, episodes}
- event    {t, level, message} (+ step when it belongs to one: checkpoint saved, warning, ...)
- attempt  {t, step, attempt} written first by every attempt of the worker (the first, a resume, a
  restart): the run did not run between the records before it and those after it, so plots break
  their lines there
"""

from __future__ import annotations

import time
from typing import Any

EPISODE, PROGRESS, TRAIN, EVAL, EVENT, ATTEMPT = "episode", "progress", "train", "eval", "event", "attempt"
STEP_KINDS = (EPISODE, PROGRESS, TRAIN)  # the kinds whose step tells how far a run got


def episode(step: int, reward: float, length: int, t: float | None = None) -> dict[str, Any]:
    return {"kind": EPISODE, "step": int(step), "t": time.time() if t is None else t,
            "reward": float(reward), "length": int(length)}


def progress(step: int, fps: float, total: int | None, **extra: Any) -> dict[str, Any]:
    return {"kind": PROGRESS, "step": int(step), "t": time.time(), "fps": round(fps, 2), "total": total, **extra}


def train(step: int, values: dict[str, float | None]) -> dict[str, Any]:
    return {"kind": TRAIN, "step": int(step), "t": time.time(), **values}


def evaluation(step: int, mean_reward: float, std_reward: float, episodes: int) -> dict[str, Any]:
    return {"kind": EVAL, "step": int(step), "t": time.time(), "mean_reward": float(mean_reward),
            "std_reward": float(std_reward), "episodes": int(episodes)}


def event(message: str, level: str = "info", step: int | None = None) -> dict[str, Any]:
    rec: dict[str, Any] = {"kind": EVENT, "t": time.time(), "level": level}
    if step is not None:
        rec["step"] = int(step)
    rec["message"] = message
    return rec


def attempt(number: int, step: int) -> dict[str, Any]:
    """Attempt ``number`` of the worker starts, from ``step`` (a resume: the checkpoint's)."""
    return {"kind": ATTEMPT, "t": time.time(), "step": int(step), "attempt": int(number)}
